import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../harness/process.js";
import { databaseForProcess } from "../support/mcp.js";

const SCRIPT = join(projectRoot, "scripts", "build-if-stale.mjs");

describe("restarts", () => {
  let project: string;
  beforeAll(() => {
    // A project of the same shape whose "build" only counts how often it runs.
    project = mkdtempSync(join(tmpdir(), "agentline-build-"));
    mkdirSync(join(project, "src"));
    writeFileSync(join(project, "src", "a.ts"), "export const a = 1;\n");
    writeFileSync(join(project, "tsconfig.json"), "{}");
    writeFileSync(join(project, "tsconfig.build.json"), JSON.stringify({ include: ["src"] }));
    writeFileSync(join(project, "package-lock.json"), "{}");
    writeFileSync(
      join(project, "build.mjs"),
      'import { appendFileSync, mkdirSync } from "node:fs"; mkdirSync("dist", { recursive: true }); appendFileSync("builds.log", "built\\n");\n',
    );
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "shape", private: true, type: "module", scripts: { build: "node build.mjs" } }));
  });
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  const builds = () => readFileSync(join(project, "builds.log"), "utf8").split("\n").filter(Boolean).length;
  const run = () => {
    const result = spawnSync(process.execPath, [SCRIPT], { cwd: project, encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe("");
  };

  it("build when there is no build, skip it when nothing changed, and build again after a change", () => {
    run();
    expect(builds()).toBe(1);
    run();
    run();
    expect(builds()).toBe(1);
    // An edit: the file is newer than the last build.
    const edited = new Date();
    utimesSync(join(project, "src", "a.ts"), edited, edited);
    run();
    expect(builds()).toBe(2);
    run();
    expect(builds()).toBe(2);
    rmSync(join(project, "dist"), { recursive: true });
    run();
    expect(builds()).toBe(3);
  });

  it("go through that check in npm start, npm run admin and npm run bench", () => {
    const { scripts } = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8"));
    expect(scripts.prestart).toBe("node scripts/ensure-installed.mjs && node scripts/build-if-stale.mjs");
    expect(scripts.preadmin).toBe("node scripts/ensure-installed.mjs && node scripts/build-if-stale.mjs");
    expect(scripts.bench).toMatch(/^node scripts\/build-if-stale\.mjs && /);
    expect(Object.values(scripts).join("\n")).not.toMatch(/npm run --silent build/);
  });
});

describe("npm run admin", () => {
  it("prints only its result on stdout", async () => {
    const database = await databaseForProcess();
    try {
      const run = spawnSync("npm", ["run", "admin", "--", "api-key", "--email", "quiet@example.com"], {
        cwd: projectRoot,
        env: { PATH: process.env.PATH!, HOME: process.env.HOME!, ...database.env },
        encoding: "utf8",
        timeout: 120_000,
      });
      expect(run.status, run.stderr).toBe(0);
      const lines = run.stdout.split("\n").filter((line) => line !== "");
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ api_key: expect.stringMatching(/^sk_/), account_created: true });
    } finally {
      await database.drop();
    }
  }, 150_000);
});
