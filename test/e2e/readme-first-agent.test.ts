import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { projectRoot, type ServiceProcess, spawnService } from "../../harness/process.js";

/** The fenced blocks of README's "Your first agent" section, with their info strings. */
function firstAgentBlocks(): Array<{ info: string; code: string }> {
  const readme = readFileSync(join(projectRoot, "README.md"), "utf8");
  const section = /^## Your first agent\n([\s\S]*?)^## /m.exec(readme)?.[1];
  if (!section) throw new Error("README has no 'Your first agent' section");
  return [...section.matchAll(/```([^\n]*)\n([\s\S]*?)```/g)].map((m) => ({ info: m[1]!.trim(), code: m[2]! }));
}

const cleanup: Array<() => unknown> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

/** A shell running a README block the way a reader would, in the repository, with the variables of earlier blocks. */
function shell(code: string, env: Record<string, string>, state: string): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  // `set -a` exports every variable a block sets, so the next block (another shell) sees it too.
  const script = `set -ae\nsource ${state}\n${code}\nexport -p > ${state}\n`;
  const child = spawn("bash", ["-c", script], { cwd: projectRoot, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  cleanup.push(() => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  });
  return { child, output: () => output, exited };
}

async function until(check: () => boolean, what: string, output: () => string, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("README, Your first agent", () => {
  it("runs every snippet as written: start, CLI sign-in, example agent, a call, the SDK", { timeout: 400_000 }, async () => {
    const blocks = firstAgentBlocks();
    expect(blocks.map((b) => b.info)).toEqual(["sh", "sh", "sh", "sh background", "sh", "ts"]);
    const home = mkdtempSync(join(tmpdir(), "agentline-readme-home-"));
    const dataDir = mkdtempSync(join(tmpdir(), "agentline-readme-data-"));
    cleanup.push(
      () => rmSync(home, { recursive: true, force: true }),
      () => rmSync(dataDir, { recursive: true, force: true }),
    );

    // Terminal 1: the service, started by the block's own command (on a free port and a fresh DATA_DIR).
    const [start, ...rest] = blocks;
    expect(start!.code.trim()).toBe("npm start");
    const service: ServiceProcess = await spawnService({ DATA_DIR: dataDir }, start!.code.trim().split(" "));
    cleanup.push(() => service.stop());

    const env = { PATH: process.env.PATH!, HOME: home, AGENTLINE_BASE_URL: service.baseUrl };
    const state = join(home, "readme-state.sh");
    writeFileSync(state, "");
    let sdkOutput = "";
    for (const [index, block] of rest.entries()) {
      if (block.info === "ts") {
        // "Save this as my-agent.ts in the repository and run it with npx tsx my-agent.ts"
        const dir = join(projectRoot, ".scratch");
        mkdirSync(dir, { recursive: true });
        const file = join(dir, `readme-my-agent-${process.pid}.ts`);
        writeFileSync(file, block.code);
        cleanup.push(() => rmSync(file, { force: true }));
        const agent = shell(`npx tsx ${file}`, env, state);
        await until(() => /Call me: .*--agent agt_\w+/.test(agent.output()), "the SDK agent to be ready", agent.output);
        sdkOutput = agent.output();
        continue;
      }
      const run = shell(block.code, env, state);
      if (block.info === "sh background") {
        await until(() => run.output().includes("is answering its calls"), `block ${index + 2} to be ready`, run.output);
        continue;
      }
      // The sign-in code is read from the terminal: type it when asked, from the service's log.
      const typed = (async () => {
        await until(() => run.output().includes("Code: ") || run.child.exitCode !== null, "a prompt", run.output);
        if (run.child.exitCode !== null) return;
        const codes = [...service.output().matchAll(/Your agentline sign-in code: (\d{6})/g)];
        run.child.stdin!.end(`${codes.at(-1)![1]}\n`);
      })();
      expect(await run.exited, run.output()).toBe(0);
      await typed;
      if (block.code.includes("npx agentline say")) {
        expect(run.output()).toContain("agent: We do! Two sourdough loaves are left. Shall I keep one for you?");
        expect(run.output()).toMatch(/caller: Hi, do you have sourdough today\?\nagent: We do! Two sourdough loaves are left/);
      }
    }

    // The SDK agent answers a call placed the way it says.
    const callCommand = /Call me: (npx agentline call .*)/.exec(sdkOutput)![1]!;
    const call = shell(`CALL=$(${callCommand})\nnpx agentline say $CALL "Is this the echo?"`, env, state);
    expect(await call.exited, call.output()).toBe(0);
    expect(call.output()).toContain("agent: You said: Is this the echo?");
  });
});
