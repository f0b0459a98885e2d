import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../harness/process.js";

const BIN = join(projectRoot, "dist", "bin", "agentline.js");

/** Runs `agentline serve` until it exits; it is expected not to start. */
function serve(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "serve"], {
      env: { PATH: process.env.PATH!, PORT: "0", LOG_LEVEL: "error", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The one line a failed start prints: no stack trace, nothing on stdout. */
async function refusal(env: Record<string, string>): Promise<string> {
  const { code, stdout, stderr } = await serve(env);
  expect(code).toBe(1);
  expect(stdout).toBe("");
  const lines = stderr.trimEnd().split("\n");
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  return lines[0]!;
}

// The PostgreSQL server the suite may use, or the machine's own.
const server = new URL(process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres");

describe("a service that cannot start says why in one line", () => {
  it("names an unreachable DATABASE_URL without printing its password", async () => {
    const line = await refusal({ DATABASE_URL: "postgres://postgres:hunter2secret@127.0.0.1:1/agentline" });
    expect(line).toBe("agentline: cannot reach the database at 127.0.0.1:1 (DATABASE_URL): connection refused: is PostgreSQL running there?");
  });

  it("names a database that does not exist", async () => {
    const missing = new URL(server);
    missing.pathname = `/agentline_missing_${process.pid}`;
    const line = await refusal({ DATABASE_URL: missing.toString() });
    expect(line).toBe(
      `agentline: the database "agentline_missing_${process.pid}" does not exist at ${server.hostname}:${server.port || "5432"} (DATABASE_URL): create it (createdb agentline_missing_${process.pid}) or name another one`,
    );
  });

  it("names a port in use", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const { port } = holder.address() as { port: number };
    try {
      const line = await refusal({ PORT: String(port), DATA_DIR: "memory://" });
      expect(line).toBe(
        `agentline: port ${port} on 127.0.0.1 is already in use (PORT): stop the process using it, or choose another PORT (0 picks a free one)`,
      );
    } finally {
      holder.close();
    }
  });

  it("names a DATA_DIR the embedded database cannot use", async () => {
    // A file where the directory should be (not a permission problem: the suite may run as root).
    const file = join(mkdtempSync(join(tmpdir(), "agentline-datadir-")), "not-a-directory");
    writeFileSync(file, "");
    try {
      const line = await refusal({ DATA_DIR: file });
      expect(line).toBe(
        `agentline: cannot use ${file} for the embedded database (DATA_DIR): a file is in the way of that directory; choose another DATA_DIR, or set DATABASE_URL`,
      );
      const below = await refusal({ DATA_DIR: join(file, "data") });
      expect(below).toBe(
        `agentline: cannot use ${join(file, "data")} for the embedded database (DATA_DIR): a part of that path is a file, not a directory; choose another DATA_DIR, or set DATABASE_URL`,
      );
    } finally {
      rmSync(dirname(file), { recursive: true, force: true });
    }
  });

  it("names a missing Twilio setting, and a malformed auth token without printing it (CARRIER=twilio)", async () => {
    const twilio = { CARRIER: "twilio", TWILIO_ACCOUNT_SID: "AC" + "a".repeat(32), BASE_URL: "https://line.example.com", DATA_DIR: "memory://" };
    expect(await refusal(twilio)).toBe(
      "agentline: Invalid configuration: TWILIO_AUTH_TOKEN is required with CARRIER=twilio (it checks Twilio's signatures, even with an API key)",
    );
    const token = "0123456789abcdef0123456789abcdeZ";
    const line = await refusal({ ...twilio, TWILIO_AUTH_TOKEN: token });
    expect(line).toBe(
      "agentline: Invalid configuration: TWILIO_AUTH_TOKEN (value not shown, 32 characters): expected 32 hexadecimal digits (the account's auth token)",
    );
  });

  it("names a bad secret without printing it", async () => {
    const line = await refusal({ SECRET_KEY: "tooshort-but-private" });
    expect(line).toBe("agentline: Invalid configuration: SECRET_KEY (value not shown, 20 characters): must be at least 32 characters");
  });

  it("names a DATABASE_URL that does not parse, without printing its password", async () => {
    const line = await refusal({ DATABASE_URL: "postgres://postgres:hunter2secret@127.0.0.1:99999/agentline" });
    expect(line).toBe(
      'agentline: Invalid configuration: DATABASE_URL="postgres://postgres:***@127.0.0.1:99999/agentline": is not a valid URL: check the host and port, and percent-encode special characters in the user name and password',
    );
  });

  it("names a bad Twilio auth token without printing it", async () => {
    const line = await refusal({ CARRIER: "twilio", TWILIO_AUTH_TOKEN: "not-the-token-format" });
    expect(line).toBe(
      "agentline: Invalid configuration: TWILIO_AUTH_TOKEN (value not shown, 20 characters): expected 32 hexadecimal digits (the account's auth token)",
    );
  });
});
