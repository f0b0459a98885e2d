import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, SECRET_SETTINGS } from "./config.js";

describe("loadConfig", () => {
  it("serves a complete sandbox with nothing set", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: "127.0.0.1",
      baseUrl: undefined,
      databaseUrl: undefined,
      dataDir: "./.data",
      carrier: "sandbox",
      paymentsMode: "local",
      signupCreditUsd: "5.00",
      allowPrivateWebhooks: false,
      trustProxy: false,
      logLevel: "info",
    });
  });

  it("reads every variable it knows and ignores the rest", () => {
    const config = loadConfig({
      PORT: "9000",
      HOST: "0.0.0.0",
      BASE_URL: "https://api.example.com/",
      DATABASE_URL: "postgres://u@h/db",
      DATA_DIR: "/var/lib/x",
      SMTP_URL: "smtps://u:p@mail:465",
      CARRIER: "sandbox",
      SIGNUP_CREDIT_USD: "0",
      ALLOW_PRIVATE_WEBHOOKS: "yes",
      SECRET_KEY: "k".repeat(32),
      PAYMENTS_MODE: "chain",
      X402_RPC_URL: "http://127.0.0.1:8545",
      X402_RELAYER_PRIVATE_KEY: "0x" + "11".repeat(32),
      X402_PAYEE: "0x" + "22".repeat(20),
      TRUST_PROXY: "2",
      LOG_LEVEL: "debug",
      UNRELATED: "whatever",
    });
    expect(config).toMatchObject({
      port: 9000,
      host: "0.0.0.0",
      baseUrl: "https://api.example.com",
      databaseUrl: "postgres://u@h/db",
      carrier: "sandbox",
      allowPrivateWebhooks: true,
      paymentsMode: "chain",
      signupCreditUsd: "0",
      trustProxy: 2,
      logLevel: "debug",
    });
  });

  it("reads retry schedules as lists of durations", () => {
    expect(loadConfig({}).webhookRetryScheduleMs).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: "10ms, 2s,1m,1h" }).webhookRetryScheduleMs).toEqual([10, 2_000, 60_000, 3_600_000]);
  });

  it.each([
    [{ PAYMENTS_MODE: "chain", X402_RELAYER_PRIVATE_KEY: "0x" + "11".repeat(32), X402_PAYEE: "0x" + "22".repeat(20) }, "X402_RPC_URL"],
    [{ PAYMENTS_MODE: "chain", X402_RPC_URL: "http://x", X402_PAYEE: "0x" + "22".repeat(20) }, "X402_RELAYER_PRIVATE_KEY"],
    [{ PAYMENTS_MODE: "facilitator", X402_PAYEE: "0x" + "22".repeat(20) }, "X402_FACILITATOR_URL"],
    [{ PAYMENTS_MODE: "facilitator", X402_FACILITATOR_URL: "https://f.example" }, "X402_PAYEE"],
  ])("refuses a payments mode without what it needs: %j needs %s", (env, name) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${name} is required`));
  });

  const twilio = { CARRIER: "twilio", TWILIO_ACCOUNT_SID: "AC" + "a".repeat(32), TWILIO_AUTH_TOKEN: "b".repeat(32), BASE_URL: "https://line.example.com" };

  it("reads the Twilio carrier's settings, with no signup credit by default", () => {
    expect(loadConfig(twilio)).toMatchObject({
      carrier: "twilio",
      signupCreditUsd: "0",
      baseUrl: "https://line.example.com",
      twilio: {
        accountSid: twilio.TWILIO_ACCOUNT_SID,
        authToken: twilio.TWILIO_AUTH_TOKEN,
        apiKey: undefined,
        apiUrl: "https://api.twilio.com",
        timeoutMs: 8000,
      },
    });
    const withKey = loadConfig({
      ...twilio,
      TWILIO_API_KEY_SID: "SK" + "c".repeat(32),
      TWILIO_API_KEY_SECRET: "s".repeat(32),
      TWILIO_API_URL: "http://127.0.0.1:9/",
    });
    expect(withKey.twilio).toMatchObject({ apiKey: { sid: "SK" + "c".repeat(32), secret: "s".repeat(32) }, apiUrl: "http://127.0.0.1:9" });
    expect(loadConfig({}).twilio).toBeUndefined();
  });

  it("allows plain http for BASE_URL only on a loopback host with Twilio", () => {
    expect(loadConfig({ ...twilio, BASE_URL: "http://127.0.0.1:8080" }).baseUrl).toBe("http://127.0.0.1:8080");
    expect(loadConfig({ ...twilio, BASE_URL: "http://localhost:8080" }).baseUrl).toBe("http://localhost:8080");
    expect(() => loadConfig({ ...twilio, BASE_URL: "http://line.example.com" })).toThrow(
      /^Invalid configuration: BASE_URL="http:\/\/line.example.com": must be https/,
    );
  });

  it.each([
    ["TWILIO_ACCOUNT_SID", { TWILIO_ACCOUNT_SID: undefined }],
    ["TWILIO_AUTH_TOKEN", { TWILIO_AUTH_TOKEN: undefined }],
    ["BASE_URL", { BASE_URL: undefined }],
    ["TWILIO_API_KEY_SECRET", { TWILIO_API_KEY_SID: "SK" + "c".repeat(32) }],
    ["TWILIO_API_KEY_SID", { TWILIO_API_KEY_SECRET: "s".repeat(32) }],
  ])("refuses CARRIER=twilio without %s", (name, change) => {
    expect(() => loadConfig({ ...twilio, ...change })).toThrow(new RegExp(`^Invalid configuration: ${name} is required`));
  });

  it.each([
    ["TWILIO_ACCOUNT_SID", "SK" + "a".repeat(32)],
    ["TWILIO_API_KEY_SID", "AC" + "a".repeat(32)],
    ["TWILIO_API_URL", "ftp://twilio"],
    ["TWILIO_TIMEOUT_MS", "10"],
  ])("stops with one line naming a malformed %s", (name, value) => {
    expect(() => loadConfig({ ...twilio, [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name}(=| \\(value not shown)`));
  });

  // A near-miss secret (one character short, a stray quote) is still the secret: never echoed.
  it.each([
    ["TWILIO_AUTH_TOKEN", { TWILIO_AUTH_TOKEN: "f".repeat(31) + "!" }],
    ["TWILIO_API_KEY_SECRET", { TWILIO_API_KEY_SID: "SK" + "c".repeat(32), TWILIO_API_KEY_SECRET: "Zq9".repeat(10) + "-" }],
  ])("names a malformed %s without printing its value", (name, change) => {
    const value = Object.values(change).at(-1)!;
    let message = "";
    try {
      loadConfig({ ...twilio, ...change });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(new RegExp(`^Invalid configuration: ${name} \\(value not shown, ${value.length} characters\\): expected`));
    expect(message).not.toContain(value);
  });

  it("treats empty strings as unset", () => {
    expect(loadConfig({ PORT: "", DATABASE_URL: "" })).toMatchObject({ port: 8080, databaseUrl: undefined });
  });

  it.each([
    ["PORT", "eighty"],
    ["PORT", "70000"],
    ["BASE_URL", "not a url"],
    ["DATABASE_URL", "mysql://x"],
    ["SMTP_URL", "mail.example.com"],
    ["CARRIER", "carrier-pigeon"],
    ["ALLOW_PRIVATE_WEBHOOKS", "maybe"],
    ["PAYMENTS_MODE", "cash"],
    ["SIGNUP_CREDIT_USD", "-1"],
    ["LOG_LEVEL", "loud"],
    ["TURN_TIMEOUT_MS", "5"],
    ["X402_NETWORK", "base"],
    ["X402_PAYEE", "0x123"],
    ["WEBHOOK_RETRY_SCHEDULE", "5s,soon"],
    ["RELAY_WINDOW", "0"],
    ["AGENTID_ISSUER", "http://auth.example.com"],
    ["AGENTID_ISSUER", "http://10.0.0.5:8080"],
    ["AGENTID_ISSUER", "ftp://auth.example.com"],
    ["AGENTID_ISSUER", "https://auth.example.com/?tenant=1"],
    ["AGENTID_SESSION_TTL_S", "5"],
  ])("stops with one line naming %s=%s", (name, value) => {
    let error: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain(`${name}=${JSON.stringify(value)}`);
    expect(message).not.toContain("\n");
  });

  describe("AgentID", () => {
    const issuer = { AGENTID_ISSUER: "https://auth.agentid.com", AGENTID_CLIENT_ID: "agentline" };

    it("is off with no issuer, and on with an issuer and a client id", () => {
      expect(loadConfig({}).agentId).toBeUndefined();
      expect(loadConfig(issuer).agentId).toEqual({ issuer: "https://auth.agentid.com", clientId: "agentline", clientSecret: undefined, sessionTtlS: 600 });
      expect(loadConfig({ ...issuer, AGENTID_CLIENT_SECRET: "s3cret", AGENTID_SESSION_TTL_S: "120" }).agentId).toMatchObject({
        clientSecret: "s3cret",
        sessionTtlS: 120,
      });
    });

    it.each(["http://127.0.0.1:4000", "http://localhost:4000", "http://[::1]:4000", "http://127.8.9.10"])("accepts an http issuer on loopback: %s", (url) => {
      expect(loadConfig({ ...issuer, AGENTID_ISSUER: url }).agentId?.issuer).toBe(url);
    });

    it.each([
      [{ AGENTID_ISSUER: "https://auth.agentid.com" }, "AGENTID_CLIENT_ID is required with AGENTID_ISSUER"],
      [{ AGENTID_CLIENT_ID: "agentline" }, "AGENTID_CLIENT_ID is set but AGENTID_ISSUER is not"],
      [{ AGENTID_CLIENT_SECRET: "s3cret" }, "AGENTID_CLIENT_SECRET is set but AGENTID_ISSUER is not"],
    ])("refuses a half configuration: %j", (env, message) => {
      expect(() => loadConfig(env)).toThrow(message);
    });
  });

  it("names a secret setting without its value, and masks a password in a URL", () => {
    const failure = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error("loadConfig accepted it");
    };
    expect(failure({ SECRET_KEY: "short-private" })).toBe("Invalid configuration: SECRET_KEY (value not shown, 13 characters): must be at least 32 characters");
    expect(failure({ X402_RELAYER_PRIVATE_KEY: "0xdeadbeef" })).not.toContain("deadbeef");
    expect(failure({ SMTP_URL: "mail://user:hunter2@mail.example.com" })).toBe(
      'Invalid configuration: SMTP_URL="mail://user:***@mail.example.com": expected an smtp:// or smtps:// URL',
    );
    // Every credential the service reads, not only its own keys.
    const refused = {
      TWILIO_AUTH_TOKEN: "private-value!",
      TWILIO_API_KEY_SECRET: "private-value!",
      METRICS_TOKEN: "private-value!",
      AGENTID_CLIENT_SECRET: "private-value!".repeat(74),
    };
    for (const [name, value] of Object.entries(refused)) {
      const message = failure({ [name]: value });
      expect(message, name).toMatch(new RegExp(`^Invalid configuration: ${name} \\(value not shown, ${value.length} characters\\): `));
      expect(message, name).not.toContain("private-value");
    }
  });

  it("names a URL that will not parse, instead of leaving a bare 'Invalid URL' to the driver", () => {
    const unparsable = "is not a valid URL: check the host and port, and percent-encode special characters in the user name and password";
    expect(() => loadConfig({ DATABASE_URL: "postgres://u:hunter2@db.example.com:99999/app" })).toThrow(
      `Invalid configuration: DATABASE_URL="postgres://u:***@db.example.com:99999/app": ${unparsable}`,
    );
    expect(() => loadConfig({ SMTP_URL: "smtp://mail example.com" })).toThrow(`Invalid configuration: SMTP_URL="smtp://mail example.com": ${unparsable}`);
    // postgres.js's host lists and encoded passwords still pass.
    expect(loadConfig({ DATABASE_URL: "postgres://u:p%40ss@db1:5432,db2:5433/app" }).databaseUrl).toBe("postgres://u:p%40ss@db1:5432,db2:5433/app");
    expect(loadConfig({ SMTP_URL: "smtps://u:p%23w@mail.example.com:465" }).smtpUrl).toBe("smtps://u:p%23w@mail.example.com:465");
  });

  it("counts as secret exactly the settings that hold a credential", () => {
    expect([...SECRET_SETTINGS].sort()).toEqual([
      "AGENTID_CLIENT_SECRET",
      "METRICS_TOKEN",
      "SECRET_KEY",
      "TWILIO_API_KEY_SECRET",
      "TWILIO_AUTH_TOKEN",
      "X402_RELAYER_PRIVATE_KEY",
    ]);
  });
});
