import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { onTestFinished } from "vitest";

export const projectRoot = join(import.meta.dirname, "..");

export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Sends a signal to the started process (npm forwards it to node), as a process manager would. */
  signal(name: NodeJS.Signals): void;
  /** SIGKILLs the whole process group: cleanup after a failed test. */
  kill(): void;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then waits for exit. */
  stop(): Promise<number | null>;
}

/**
 * Starts the service as its own process, by default exactly as the README says (`npm start`),
 * and waits for its "listening" log line to learn the port. `root` is the checkout it runs from
 * (another one's build, for a benchmark comparing two commits).
 */
export async function spawnService(env: Record<string, string>, command: string[] = ["npm", "start"], root = projectRoot): Promise<ServiceProcess> {
  const child = spawn(command[0]!, command.slice(1), {
    cwd: root,
    // A clean environment: the test runner's own variables (vitest sets BASE_URL) must not leak in.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: "0", LOG_LEVEL: "info", ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // However the test ends, nothing it started outlives it: killed when the test finishes (when
  // started inside one) and in any case when the test worker exits.
  const killIfRunning = () => {
    if (child.exitCode === null && child.signalCode === null) signal("SIGKILL", true);
  };
  process.once("exit", killIfRunning);
  try {
    onTestFinished(killIfRunning);
  } catch {
    // started from a hook: the file's afterAll stops it
  }
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const signal = (name: NodeJS.Signals, group = false) => {
    try {
      process.kill(group ? -child.pid! : child.pid!, name);
    } catch {
      // already gone
    }
  };

  const fixedPort = /^[1-9][0-9]*$/.test(env.PORT ?? "");
  const port = fixedPort ? await healthy(Number(env.PORT), exited, () => output) : await listeningLine();
  function listeningLine() {
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`service did not start within 120 s:\n${output}`)), 120_000);
      const look = () => {
        for (const line of output.split("\n")) {
          if (!line.includes('"msg":"listening"')) continue;
          clearTimeout(timer);
          resolve(JSON.parse(line).port);
          return;
        }
      };
      child.stdout!.on("data", look);
      exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`service exited with ${code} before listening:\n${output}`));
      });
    });
  }
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => output,
    signal: (name) => signal(name),
    kill: () => signal("SIGKILL", true),
    exited,
    async stop() {
      signal("SIGTERM");
      return exited;
    },
  };
}

/** With a fixed PORT (and a LOG_LEVEL that hides the "listening" line): ready once GET /health answers. */
async function healthy(port: number, exited: Promise<number | null>, output: () => string): Promise<number> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && !gone) {
    const answered = await fetch(`http://127.0.0.1:${port}/health`).then(
      (res) => res.ok,
      () => false,
    );
    if (answered) return port;
    await new Promise((r) => setTimeout(r, 100));
  }
  if (gone) throw new Error(`service exited with ${await exited} before listening:\n${output()}`);
  throw new Error(`service did not answer /health on port ${port}:\n${output()}`);
}

/** A port free right now, for a process that must be told its port in advance. */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
