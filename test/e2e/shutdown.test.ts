import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../harness/process.js";
import { adminCommand, databaseForProcess, httpMcp } from "../support/mcp.js";

const BIN = join(projectRoot, "dist", "bin", "agentline.js");
/** The server's grace period for requests in flight (gateway/server.ts). */
const GRACE_MS = 10_000;

let database: Awaited<ReturnType<typeof databaseForProcess>>;
let apiKey: string;
beforeAll(async () => {
  database = await databaseForProcess();
  apiKey = adminCommand(database.env, ["api-key", "--email", "shutdown@example.com"]).api_key;
});
afterAll(() => database?.drop());

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * The service as its own process, with stdout a pipe this test never reads (learning the port
 * from stdout would read it): it is told its port, and found by polling /health.
 */
async function startUnread(): Promise<{ child: ChildProcess; base: string; exited: Promise<number | null> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, "serve"], {
    env: { PATH: process.env.PATH!, PORT: String(port), LOG_LEVEL: "debug", ...database.env },
    stdio: ["ignore", "pipe", "ignore"],
    detached: true,
  });
  child.stdout!.pause();
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if ((await fetch(`${base}/health`).catch(() => undefined))?.ok) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error("the service did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, base, exited };
}

/** Makes the service log far more than a pipe holds: long request lines, each logged. */
async function flood(base: string): Promise<void> {
  const long = "x".repeat(6_000);
  for (let batch = 0; batch < 10; batch++) {
    await Promise.all(Array.from({ length: 10 }, (_, i) => fetch(`${base}/nothing/${long}${batch}${i}`).then((r) => r.arrayBuffer())));
  }
}

/** Resolves with the exit code, or with "still running" once the grace period has passed. */
function exitWithinGrace(exited: Promise<number | null>): Promise<number | null | "still running"> {
  return Promise.race([exited, new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), GRACE_MS - 1_000))]);
}

const kill = (child: ChildProcess) => {
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // already gone
  }
};

describe("shutdown (a real process, SIGTERM)", () => {
  it("finishes within the grace period when stdout is open but no longer read, answering a wait_for_event in flight", async () => {
    const { child, base, exited } = await startUnread();
    try {
      await flood(base);
      const mcp = await httpMcp(base, apiKey);
      const started = Date.now();
      const waiting = mcp.ok("wait_for_event", { timeout_seconds: 50 });
      await new Promise((r) => setTimeout(r, 500));
      child.kill("SIGTERM");
      const answer = await waiting;
      expect(answer).toMatchObject({ events: [], timed_out: true, hint: expect.stringMatching(/shutting down/) });
      expect(Date.now() - started).toBeLessThan(GRACE_MS);
      expect(await exitWithinGrace(exited)).toBe(0);
      await mcp.close().catch(() => undefined);
    } finally {
      kill(child);
    }
  }, 120_000);

  it("finishes within the grace period when stdout has been closed", async () => {
    const { child, base, exited } = await startUnread();
    try {
      child.stdout!.destroy();
      await flood(base);
      child.kill("SIGTERM");
      expect(await exitWithinGrace(exited)).toBe(0);
    } finally {
      kill(child);
    }
  }, 120_000);
});
