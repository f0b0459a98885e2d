import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { startSmtpServer } from "../support/smtp.js";

let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let service: TestService;
let api: Api;

beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(() => smtp?.close());
// A fresh database per test: the limits are counted in it.
beforeEach(async () => {
  service = await startTestService({ env: { SMTP_URL: smtp.url } });
  api = new Api(service.baseUrl);
});
afterEach(() => service?.stop());

const fromIp = (ip: string) => ({ headers: { "x-forwarded-for": ip } });

describe("OTP sign-in", () => {
  it("mails a code that signs in once, creating the account on first use", async () => {
    const requested = await api.post("/v1/auth/otp", { email: "Ada@Example.com" });
    expect(requested.status).toBe(200);
    expect(requested.body).toEqual({ status: "sent", email: "ada@example.com", expires_in_seconds: 600 });
    const mail = await smtp.latestTo("ada@example.com");
    expect(mail.raw).toMatch(/Subject: Your agentline sign-in code: \d{6}/);
    const otp = await smtp.codeFor("ada@example.com");

    const first = await api.post("/v1/auth/verify", { email: "ada@example.com", otp });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ account_created: true });
    expect(first.body.api_key).toMatch(/^sk_[0-9A-Za-z]{43}$/);
    expect(first.body.account_id).toMatch(/^acct_/);
    expect((await api.get("/v1/agents", { key: first.body.api_key })).status).toBe(200);

    const reused = await api.post("/v1/auth/verify", { email: "ada@example.com", otp });
    expect(reused.status).toBe(400);
    expect(reused.body.code).toBe("invalid_otp");

    await api.post("/v1/auth/otp", { email: "ada@example.com" });
    const second = await api.post("/v1/auth/verify", { email: "ADA@example.com", otp: await smtp.codeFor("ada@example.com") });
    expect(second.body).toMatchObject({ account_id: first.body.account_id, account_created: false });
    expect(second.body.api_key).not.toBe(first.body.api_key);
  });

  it("answers the same for an address with no account", async () => {
    const res = await api.post("/v1/auth/otp", { email: "nobody@example.com" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "sent", email: "nobody@example.com", expires_in_seconds: 600 });
  });

  it("voids the previous code when a new one is requested", async () => {
    await api.post("/v1/auth/otp", { email: "b@example.com" });
    const old = await smtp.codeFor("b@example.com");
    smtp.mails.length = 0;
    await api.post("/v1/auth/otp", { email: "b@example.com" });
    const fresh = await smtp.codeFor("b@example.com");
    if (old !== fresh) expect((await api.post("/v1/auth/verify", { email: "b@example.com", otp: old })).status).toBe(400);
    expect((await api.post("/v1/auth/verify", { email: "b@example.com", otp: fresh })).status).toBe(200);
  });

  it("gives one generic answer for a wrong code, a code for another address and an expired code", async () => {
    await api.post("/v1/auth/otp", { email: "c@example.com" });
    const otp = await smtp.codeFor("c@example.com");
    const wrong = String((Number(otp) + 1) % 1_000_000).padStart(6, "0");
    const answers = [
      await api.post("/v1/auth/verify", { email: "c@example.com", otp: wrong }),
      await api.post("/v1/auth/verify", { email: "d@example.com", otp }),
    ];
    const realNow = service.core.now;
    service.core.now = () => new Date(Date.now() + 11 * 60_000);
    answers.push(await api.post("/v1/auth/verify", { email: "c@example.com", otp }));
    service.core.now = realNow;
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: "invalid_otp", detail: answers[0]!.body.detail });
    }
  });

  it("validates the address and the code format", async () => {
    const bad = await api.post("/v1/auth/otp", { email: "not-an-address" });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.field)).toEqual(["email"]);
    const badCode = await api.post("/v1/auth/verify", { email: "a@example.com", otp: "12ab" });
    expect(badCode.status).toBe(422);
    expect(badCode.body.errors.map((e: any) => e.field)).toEqual(["otp"]);
  });
});

describe("sign-in limits", () => {
  it("answers 429 with Retry-After to the 4th code request for one address in ten minutes", async () => {
    for (let i = 0; i < 3; i++) expect((await api.post("/v1/auth/otp", { email: "e@example.com" })).status).toBe(200);
    const fourth = await api.post("/v1/auth/otp", { email: "e@example.com" });
    expect(fourth.status).toBe(429);
    expect(fourth.body.code).toBe("rate_limited");
    const retryAfter = Number(fourth.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(590);
    expect(retryAfter).toBeLessThanOrEqual(600);
    // Other addresses are not affected by this one's limit.
    expect((await api.post("/v1/auth/otp", { email: "f@example.com" })).status).toBe(200);
  });

  it("lets the address ask again once its window has passed", async () => {
    for (let i = 0; i < 3; i++) await api.post("/v1/auth/otp", { email: "g@example.com" });
    expect((await api.post("/v1/auth/otp", { email: "g@example.com" })).status).toBe(429);
    service.core.now = () => new Date(Date.now() + 10 * 60_000 + 1_000);
    expect((await api.post("/v1/auth/otp", { email: "g@example.com" })).status).toBe(200);
  });

  it("answers 429 to the 6th code request from one IP address in ten minutes", async () => {
    // Without TRUST_PROXY a client cannot dodge the limit by claiming other addresses.
    for (let i = 0; i < 5; i++) expect((await api.post("/v1/auth/otp", { email: `ip${i}@example.com` }, fromIp(`198.51.100.${i}`))).status).toBe(200);
    const sixth = await api.post("/v1/auth/otp", { email: "ip5@example.com" }, fromIp("198.51.100.99"));
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(sixth.body.detail).toMatch(/IP address/);
  });

  it("counts the IP from X-Forwarded-For only behind a trusted proxy", async () => {
    await service.stop();
    service = await startTestService({ env: { SMTP_URL: smtp.url, TRUST_PROXY: "loopback" } });
    api = new Api(service.baseUrl);
    for (let i = 0; i < 5; i++) expect((await api.post("/v1/auth/otp", { email: `p${i}@example.com` }, fromIp("203.0.113.7"))).status).toBe(200);
    expect((await api.post("/v1/auth/otp", { email: "p5@example.com" }, fromIp("203.0.113.7"))).status).toBe(429);
    expect((await api.post("/v1/auth/otp", { email: "p6@example.com" }, fromIp("203.0.113.8"))).status).toBe(200);
  });

  it("answers 429 to the 6th verify attempt for one address, even with the right code", async () => {
    await api.post("/v1/auth/otp", { email: "h@example.com" });
    const otp = await smtp.codeFor("h@example.com");
    const wrong = String((Number(otp) + 1) % 1_000_000).padStart(6, "0");
    for (let i = 0; i < 5; i++) expect((await api.post("/v1/auth/verify", { email: "h@example.com", otp: wrong })).status).toBe(400);
    const sixth = await api.post("/v1/auth/verify", { email: "h@example.com", otp });
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("does not count a refused request against the limit", async () => {
    const start = Date.now();
    for (let i = 0; i < 3; i++) await api.post("/v1/auth/otp", { email: "i@example.com" });
    service.core.now = () => new Date(start + 5 * 60_000);
    for (let i = 0; i < 3; i++) expect((await api.post("/v1/auth/otp", { email: "i@example.com" })).status).toBe(429);
    // Had the refusals five minutes in counted, the address would still be blocked here.
    service.core.now = () => new Date(start + 10 * 60_000 + 1_000);
    expect((await api.post("/v1/auth/otp", { email: "i@example.com" })).status).toBe(200);
  });

  it("holds the limit under concurrent requests", async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => api.post("/v1/auth/otp", { email: "j@example.com" })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(3);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(5);
  });
});
