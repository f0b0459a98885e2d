import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../harness/process.js";
import { TwilioStandIn } from "../../harness/twilio/stand-in.js";

const run = promisify(execFile);

const carrierCheck = (env: Record<string, string>) =>
  run("node", ["dist/bin/agentline.js", "admin", "carrier-check"], { cwd: projectRoot, env: { PATH: process.env.PATH, LOG_LEVEL: "error", ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  );

describe("agentline admin carrier-check", () => {
  let twilio: TwilioStandIn;
  beforeAll(async () => {
    twilio = await TwilioStandIn.start({ apiKey: true });
    twilio.ownNumber("+14155550123").voiceUrl = "https://line.example.com/twilio/voice";
  });
  afterAll(async () => {
    await twilio?.close();
    twilio?.expectValid();
  });

  it("verifies the credentials (an API key here) and prints the URLs Twilio will call", { timeout: 60_000 }, async () => {
    const result = await carrierCheck(twilio.env("https://line.example.com"));
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true,
      carrier: "twilio",
      api_url: twilio.url,
      credentials: "api_key",
      account: { sid: twilio.accountSid, friendly_name: "agentline stand-in", status: "active", type: "Full" },
      webhooks: {
        voice_url: "https://line.example.com/twilio/voice",
        sms_url: "https://line.example.com/twilio/sms",
        status_callback: "https://line.example.com/twilio/status",
        conversation_relay: "wss://line.example.com/twilio/relay/{call_id}",
      },
      numbers: [{ phone_number: "+14155550123", points_here: false }],
    });
    expect(twilio.requestsOf("FetchAccount")).toHaveLength(1);
  });

  it("fails with the reason when Twilio refuses the credentials", { timeout: 60_000 }, async () => {
    const result = await carrierCheck({ ...twilio.env("https://line.example.com"), TWILIO_API_KEY_SECRET: "wrong".repeat(4) });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, error: expect.stringContaining("Twilio 20003") });
    expect(result.stderr).toMatch(/^agentline admin carrier-check: Twilio failed the account lookup \(Twilio 20003: Authenticate\)\n$/);
  });

  it("stops with one line naming a missing setting", { timeout: 60_000 }, async () => {
    const { BASE_URL: _, ...env } = twilio.env("https://line.example.com");
    const result = await carrierCheck(env);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("agentline: Invalid configuration: BASE_URL is required with CARRIER=twilio (the public https URL Twilio calls back)\n");
  });
});
