import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../cli/program.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { projectRoot, spawnService } from "../../harness/process.js";
import { startTestService, type TestService } from "../support/service.js";
import { startSmtpServer } from "../support/smtp.js";

const run = promisify(execFile);
const BIN = join(projectRoot, "dist", "bin", "agentline.js");

// One sandbox service for the file; sign-in mail goes to a real SMTP server on loopback.
let service: TestService;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let home: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000", SMTP_URL: smtp.url } });
  home = mkdtempSync(join(tmpdir(), "agentline-cli-home-"));
});
afterAll(async () => {
  await service?.stop();
  await smtp?.close();
  rmSync(home, { recursive: true, force: true });
});

/** Runs the CLI as a user would after `npm run build`, with a HOME of its own. */
function cli(args: string[], env: Record<string, string> = {}) {
  return run("node", [BIN, ...args], { cwd: projectRoot, env: { PATH: process.env.PATH, HOME: home, AGENTLINE_BASE_URL: service.baseUrl, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  );
}

/** Every command path of the program: ["serve"], ["admin", "credit"], ... */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.flatMap((sub) => [[...prefix, sub.name()], ...commandPaths(sub, [...prefix, sub.name()])]);
}

describe("agentline --help", () => {
  it("npx agentline --help prints the usage and every command", { timeout: 60_000 }, async () => {
    const { stdout } = await run("npx", ["--no-install", "agentline", "--help"], { cwd: projectRoot, env: { PATH: process.env.PATH, HOME: home } });
    expect(stdout).toMatch(/^Usage: agentline \[options\] \[command\]/);
    for (const name of ["serve", "mcp", "admin", "login", "agents", "numbers", "call", "say", "transcript", "text", "events"])
      expect(stdout).toMatch(new RegExp(`^  ${name}\\b`, "m"));
  });

  it("every command and subcommand prints its usage for --help, and serve --help starts nothing", { timeout: 120_000 }, async () => {
    const paths = commandPaths(buildProgram());
    expect(paths.length).toBeGreaterThan(14);
    for (const path of paths) {
      const result = await cli([...path, "--help"]);
      expect(result.code, path.join(" ")).toBe(0);
      expect(result.stdout, path.join(" ")).toMatch(new RegExp(`^Usage: agentline ${path.join(" ")}\\b`));
    }
    const serveHelp = await cli(["serve", "--help"], { PORT: "0", DATA_DIR: "memory://" });
    expect(serveHelp.stdout + serveHelp.stderr).not.toContain("listening");
  });
});

describe("the CLI against the sandbox", () => {
  it("login → agent → number → call → events tail → say → transcript", { timeout: 120_000 }, async () => {
    // login reads the code from standard input, after it asked for it.
    const email = "cli@example.com";
    const login = spawn("node", [BIN, "login", "--email", email], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH, HOME: home, AGENTLINE_BASE_URL: service.baseUrl },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const loginExit = new Promise((resolve) => login.on("exit", resolve));
    let loginOut = "";
    let loginErr = "";
    login.stdout.on("data", (d) => (loginOut += d));
    const asked = new Promise<void>((resolve) => login.stderr.on("data", (d) => ((loginErr += d), loginErr.includes("Code: ") && resolve())));
    await asked;
    const code = await smtp.codeFor(email);
    login.stdin.end(`${code}\n`);
    expect(await loginExit, loginErr).toBe(0);
    expect(loginOut).toMatch(/^Signed in as cli@example\.com \(acct_\w+\)\. The key is saved in .*config\.json\.$/m);
    const saved = join(home, ".config", "agentline", "config.json");
    expect(statSync(saved).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(saved, "utf8"))).toMatchObject({ base_url: service.baseUrl, api_key: expect.stringMatching(/^sk_/), email });

    // From here on the saved key is used.
    const agentId = (await cli(["agents", "create", "Bakery"])).stdout.trim();
    expect(agentId).toMatch(/^agt_/);
    const listed = JSON.parse((await cli(["agents", "--json"])).stdout);
    expect(listed.data.map((a: { agent_id: string }) => a.agent_id)).toEqual([agentId]);
    const number = await cli(["numbers", "buy", "--agent", agentId, "--area-code", "415"]);
    expect(number.stdout.trim()).toMatch(/^\+1415555\d{4}$/);
    const call = await cli(["call", "+14155550199", "--agent", agentId]);
    const callId = call.stdout.trim();
    expect(callId).toMatch(/^call_/);
    expect(call.stderr).toContain("in-progress");

    const tail = spawn("node", [BIN, "events", "tail", "--agent", agentId, "--count", "1"], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH, HOME: home, AGENTLINE_BASE_URL: service.baseUrl },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const tailExit = new Promise((resolve) => tail.on("exit", resolve));
    let tailOut = "";
    let tailErr = "";
    tail.stdout.on("data", (d) => (tailOut += d));
    await new Promise<void>((resolve) => tail.stderr.on("data", (d) => ((tailErr += d), tailErr.includes("Listening for") && resolve())));
    const said = await cli(["say", callId, "Hello", "there", "--no-wait"]);
    expect(said.stdout.trim()).toMatch(/^turn_/);
    expect(await tailExit, tailErr).toBe(0);
    expect(tailOut).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  call\\.utterance +${callId}  caller: "Hello there"$`, "m"));

    const transcript = await cli(["transcript", callId]);
    expect(transcript.stdout).toBe("caller: Hello there\n");
    expect(JSON.parse((await cli(["transcript", callId, "--json"])).stdout)).toEqual([{ role: "user", text: "Hello there", timestamp: expect.any(String) }]);

    // Hand the call to a person: a whisper needs --warm; then a warm transfer starts dialing.
    const unwarm = await cli(["transfer", callId, "+14155557777", "--whisper", "Hi"]);
    expect(unwarm.code).toBe(2);
    expect(unwarm.stderr).toMatch(/^agentline: --whisper is for a warm transfer/m);
    const transferred = await cli(["transfer", callId, "+14155557777", "--warm", "--whisper", "A bakery customer.", "--json"]);
    expect(transferred.code, transferred.stderr).toBe(0);
    expect(JSON.parse(transferred.stdout)).toMatchObject({ call_id: callId, status: "in-progress", transfer_status: "dialing" });
    const again = await cli(["transfer", callId, "+14155558888"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/\(transfer_in_progress\)$/m);
    // A recorded call to a voicemail box (…0004), leaving a message.
    const voicemail = await cli([
      "call",
      "+14155550004",
      "--agent",
      agentId,
      "--record",
      "--machine-detection",
      "leave_message",
      "--voicemail-message",
      "Your order is ready.",
      "--json",
    ]);
    expect(voicemail.code, voicemail.stderr).toBe(0);
    expect(JSON.parse(voicemail.stdout)).toMatchObject({ record: true, answered_by: "machine", voicemail_left: true, status: "completed" });
    const text = await cli(["text", agentId, "+14155550199", "Your", "bread", "is", "ready."]);
    expect(text.stdout.trim()).toMatch(/^msg_/);
    expect(text.stderr).toContain("1 segment(s), queued");
    const sent = JSON.parse((await cli(["text", agentId, "+14155550199", "€".repeat(81), "--json"])).stdout);
    expect(sent).toMatchObject({ direction: "outbound", segments: 2, text: "€".repeat(81) });
    const stopped = await cli(["text", agentId, "+14155550199", ""]);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/^agentline: .*\(validation_error\)$/m);
  });

  it("says what went wrong in one line: a refusal from the service, no key, no service", { timeout: 60_000 }, async () => {
    const refused = await cli(["call", "+14155550199", "--agent", "agt_nope"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^agentline: .*\(not_found\)$/m);
    const keyless = await cli(["agents"], { HOME: mkdtempSync(join(tmpdir(), "agentline-empty-home-")) });
    expect(keyless.stderr).toMatch(/agentline: No API key: run `npx agentline login`/);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const nowhere = await cli(["agents"], { AGENTLINE_BASE_URL: `http://127.0.0.1:${port}`, AGENTLINE_API_KEY: "sk_x" });
    expect(nowhere.stderr).toMatch(/^agentline: the service does not answer \(.*ECONNREFUSED.*\); is it running/);
  });
});

describe("speaking first and keypad digits from the CLI", () => {
  it("agents create --greeting, call --from --greeting, digits; a from number not the agent's is refused naming from_number", { timeout: 60_000 }, async () => {
    const { apiKey } = await createAccount(service.core);
    const api = new Api(service.baseUrl, apiKey);
    const as = (args: string[]) => cli(args, { AGENTLINE_API_KEY: apiKey });
    const agentId = (await as(["agents", "create", "Dispatcher", "--greeting", "Dispatch, how can I help?"])).stdout.trim();
    expect((await api.get(`/v1/agents/${agentId}`)).body.greeting).toBe("Dispatch, how can I help?");
    await as(["numbers", "buy", "--agent", agentId]);
    const second = (await as(["numbers", "buy", "--agent", agentId])).stdout.trim();
    const call = await as(["call", "+14155550198", "--agent", agentId, "--from", second, "--greeting", "Hi, dispatch here."]);
    const callId = call.stdout.trim();
    expect(call.stderr).toContain(`from ${second}`);
    expect((await api.get(`/v1/calls/${callId}/transcript`)).body.map((l: any) => l.text)).toEqual(["Hi, dispatch here."]);
    const pressed = await as(["digits", callId, "1w#"]);
    expect(pressed.code, pressed.stderr).toBe(0);
    expect(pressed.stdout.trim()).toBe(`${callId}: pressed 1w#`);
    const badKeys = await as(["digits", callId, "1x"]);
    expect(badKeys.code).toBe(1);
    expect(badKeys.stderr).toContain("digits");
    const other = (await as(["agents", "create", "Other"])).stdout.trim();
    const strangers = (await as(["numbers", "buy", "--agent", other])).stdout.trim();
    const refused = await as(["call", "+14155550198", "--agent", agentId, "--from", strangers]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/from_number/);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toHaveLength(1);
  });
});

describe("dev sign-in with no mail server", () => {
  it("the banner says where codes go, the code is plain in the log, and admin api-key explains a held database", { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "agentline-devsignin-"));
    const running = await spawnService({ DATA_DIR: dataDir }, ["node", "dist/bin/agentline.js", "serve"]);
    try {
      // The banner goes to stderr just after the "listening" log line.
      await expect.poll(() => running.output(), { timeout: 10_000 }).toMatch(/sign-in codes +not mailed \(no SMTP_URL\): printed in this log/);
      expect(running.output()).toContain(`API reference  ${running.baseUrl}/docs`);
      await fetch(`${running.baseUrl}/v1/auth/otp`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "dev@example.com" }),
      });
      await expect
        .poll(() => running.output(), { timeout: 10_000 })
        .toMatch(/"msg":"mail not sent \(no SMTP_URL\), logged instead: to dev@example\.com: Your agentline sign-in code: \d{6}"/);

      const admin = await cli(["admin", "api-key", "--email", "dev@example.com"], { DATA_DIR: dataDir, AGENTLINE_BASE_URL: "" });
      expect(admin.code).toBe(1);
      expect(admin.stderr).toMatch(
        new RegExp(
          `^agentline admin api-key: the running service \\(process \\d+\\) holds the embedded database in ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`,
        ),
      );
      expect(admin.stderr).toContain("npx agentline login --email you@example.com");
      expect(admin.stdout).toBe("");
    } finally {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
