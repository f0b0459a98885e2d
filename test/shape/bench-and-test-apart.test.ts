import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../harness/process.js";

// What each folder may not import: benchmarks and tests share only harness/, and harness/ stands
// on its own (docs/decisions/0078-bench-and-test-apart.md).
const FORBIDDEN: Record<string, string[]> = {
  bench: ["test"],
  test: ["bench"],
  harness: ["test", "bench"],
};

/** Every module specifier a file names: static imports, re-exports, `import()`, `require()`. */
function specifiers(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((file) => file.fileName);
}

/** The top-level folder a relative specifier of `file` (a path from the root) lands in. */
function folderOf(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const target = relative(projectRoot, resolve(projectRoot, dirname(file), specifier));
  return target.startsWith("..") ? undefined : target.split(sep)[0];
}

/** `from → to` for each import that crosses a forbidden line, over `[path from the root, source]` pairs. */
function crossings(files: Array<[string, string]>): string[] {
  return files.flatMap(([file, source]) => {
    const forbidden = FORBIDDEN[file.split(/[\\/]/)[0]!] ?? [];
    return specifiers(source)
      .filter((specifier) => forbidden.includes(folderOf(file, specifier) ?? ""))
      .map((specifier) => `${file} → ${specifier}`);
  });
}

function sourcesUnder(folder: string): Array<[string, string]> {
  return readdirSync(join(projectRoot, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => /\.(ts|mts|cts|js|mjs|cjs)$/.test(name) && !name.split(sep).includes("node_modules"))
    .map((name) => [join(folder, name), readFileSync(join(projectRoot, folder, name), "utf8")]);
}

describe("benchmarks and tests", () => {
  it("import nothing from each other: what both need is in harness/", () => {
    expect(crossings(Object.keys(FORBIDDEN).flatMap(sourcesUnder))).toEqual([]);
  });

  it("would notice an import across, however it is written", () => {
    const found = crossings([
      ["bench/a.ts", `import { Api } from "../test/support/api.js";`],
      ["bench/b.ts", `export { x } from "../test/x.js";`],
      ["bench/deep/c.ts", `const m = await import("../../test/y.js");`],
      ["test/calls/d.test.ts", `import type { Setup } from "../../bench/support.js";`],
      ["test/e.test.ts", `import "../bench/side-effect.js";`],
      ["harness/f.ts", `import { bystander } from "../test/support/bystander.js";`],
      ["bench/ok.ts", `import { Api } from "../harness/api.js"; import express from "express";`],
      ["test/ok.test.ts", `import { x } from "./support/bench-like-name.js";`],
    ]);
    expect(found).toEqual([
      "bench/a.ts → ../test/support/api.js",
      "bench/b.ts → ../test/x.js",
      "bench/deep/c.ts → ../../test/y.js",
      "test/calls/d.test.ts → ../../bench/support.js",
      "test/e.test.ts → ../bench/side-effect.js",
      "harness/f.ts → ../test/support/bystander.js",
    ]);
  });
});
