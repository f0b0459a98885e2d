import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { clientSettings, SETTING_GROUPS } from "../../core/config.js";
import { projectRoot } from "../../harness/process.js";
import { CONFIGURATION_DOC_PATH, configurationReference } from "../../scripts/config-docs.js";

const committed = () => readFileSync(CONFIGURATION_DOC_PATH, "utf8");

/** The names `env.NAME` reads in the code that ships (tests and examples left out). */
function environmentReads(): Set<string> {
  const names = new Set<string>();
  for (const folder of ["core", "gateway", "mcp", "payments", "discovery", "bin", "cli", "sdk/src"]) {
    for (const file of readdirSync(join(projectRoot, folder), { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts") || file.endsWith(".test.ts")) continue;
      for (const match of readFileSync(join(projectRoot, folder, file), "utf8").matchAll(/\benv\??\.([A-Z][A-Z0-9_]+)/g)) names.add(match[1]!);
    }
  }
  return names;
}

describe("docs/configuration.md", () => {
  it("is what the settings' schemas generate today (run `npm run docs:config` after changing a setting)", () => {
    // Compared line by line so a failure shows which setting the page and the schemas disagree on.
    expect(committed().split("\n")).toEqual(configurationReference().split("\n"));
  });

  it("would notice a setting added to a group", () => {
    const [first, ...rest] = SETTING_GROUPS;
    const grown = first
      .extend({ BRAND_NEW_MS: z.coerce.number().int().min(1).max(9).default(3).meta({ description: "A setting the page does not know." }) })
      .meta(first.meta()!);
    const page = configurationReference([grown, ...rest, clientSettings]);
    expect(page).toContain("| `BRAND_NEW_MS` | `3` | A setting the page does not know. Whole number, 1–9. |");
    expect(page).not.toBe(committed());
  });

  it("lists every variable the service, the CLI and the SDK read", () => {
    const rows = new Set([...committed().matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((match) => match[1]!));
    // The operating system's own variables, read to find the user's home.
    const system = new Set(["HOME", "XDG_CONFIG_HOME"]);
    const read = [...environmentReads()].filter((name) => !system.has(name));
    expect(read.length).toBeGreaterThan(5);
    expect(read.filter((name) => !rows.has(name))).toEqual([]);
    for (const group of SETTING_GROUPS) for (const name of Object.keys(group.shape)) expect(rows, name).toContain(name);
  });

  it("refuses a setting with no description, or one in two groups", () => {
    const undocumented = z.object({ NO_WORDS: z.string().optional() }).meta({ title: "T", description: "D" });
    expect(() => configurationReference([undocumented])).toThrow("NO_WORDS has no description");
    const [first] = SETTING_GROUPS;
    expect(() => configurationReference([first, first])).toThrow(`${Object.keys(first.shape)[0]} is in two groups of settings`);
  });
});
