import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectRoot } from "../../harness/process.js";

export interface ExampleProcess {
  output(): string;
  /** Waits for a line of output matching the pattern; returns its match. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * Runs `npm run <script>` as a newcomer would, with a clean environment (a HOME of its own, so no
 * saved login leaks in) plus `env`.
 */
export function runScript(script: string, env: Record<string, string>): ExampleProcess {
  const child = spawn("npm", ["run", "--silent", script], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH, HOME: mkdtempSync(join(tmpdir(), "agentline-home-")), ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const waiters = new Set<() => void>();
  const collect = (d: Buffer) => {
    output += d;
    waiters.forEach((wake) => wake());
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const kill = () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  };
  process.once("exit", kill);
  return {
    output: () => output,
    waitFor(pattern, ms = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = output.match(pattern);
          if (!match) return;
          cleanup();
          resolve(match);
        };
        const timer = setTimeout(() => (cleanup(), reject(new Error(`no ${pattern} within ${ms} ms; output:\n${output}`))), ms);
        const cleanup = () => (clearTimeout(timer), waiters.delete(check));
        waiters.add(check);
        void exited.then(() =>
          setTimeout(() => waiters.has(check) && (cleanup(), reject(new Error(`${script} exited before ${pattern}; output:\n${output}`))), 50),
        );
        check();
      });
    },
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      kill();
      await exited;
    },
  };
}
