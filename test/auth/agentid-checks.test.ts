import { createServer } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { accountIdentities } from "../../core/db/schema/account-identities.js";
import { Api } from "../support/api.js";
import { OidcStandIn, type Forgery } from "../support/oidc-stand-in.js";
import { startTestService, type TestService } from "../support/service.js";

// A loopback stand-in issuer that can forge ID tokens, for a public client (PKCE only).
let issuer: OidcStandIn;
let service: TestService;
let api: Api;
let clockOffsetMs = 0;

beforeAll(async () => {
  issuer = await OidcStandIn.start();
  // Behind a trusted (loopback) proxy, so that a test can sign in from an address of its own.
  service = await startTestService({ env: { AGENTID_ISSUER: issuer.issuer, AGENTID_CLIENT_ID: "agentline-public", TRUST_PROXY: "loopback" } });
  service.core.now = () => new Date(Date.now() + clockOffsetMs);
  api = new Api(service.baseUrl);
});
afterAll(async () => {
  await service?.stop();
  await issuer?.close();
});
beforeEach(() => {
  clockOffsetMs = 0;
  issuer.forgery = "none";
  issuer.extraClaims = {};
  issuer.tokenEndpointDown = false;
});

async function start(loginHint: string) {
  const res = await api.post("/v1/auth/agentid/start", { login_hint: loginHint });
  expect(res.status).toBe(200);
  return res.body as { authorize_url: string; session_id: string };
}

const openCallback = (url: URL) => api.get(url.pathname + url.search);

/** Polls once the interval has passed. */
async function poll(sessionId: string) {
  clockOffsetMs += 5_000;
  return api.post("/v1/auth/agentid/poll", { session_id: sessionId });
}

const identitiesOf = (subject: string) => service.core.db.select().from(accountIdentities).where(eq(accountIdentities.subject, subject));

describe("AgentID sign-in checks the provider's answer", () => {
  it("signs in a public client with PKCE alone, and never keys the account on the e-mail claim", async () => {
    issuer.extraClaims = { email: "shared@example.com", email_verified: true };
    const keys = [];
    for (const subject of ["agent-one", "agent-two"]) {
      const session = await start(subject);
      expect(new URL(session.authorize_url).searchParams.get("client_id")).toBe("agentline-public");
      expect((await openCallback(await issuer.authorize(session.authorize_url))).status).toBe(200);
      const polled = await poll(session.session_id);
      expect(polled.status).toBe(200);
      keys.push(polled.body);
    }
    expect(keys[0].account_id).not.toBe(keys[1].account_id);
    expect((await api.get("/v1/agents", { key: keys[1].api_key })).status).toBe(200);
    expect(await identitiesOf("agent-one")).toEqual([expect.objectContaining({ issuer: issuer.issuer, accountId: keys[0].account_id })]);
  });

  it.each<[Forgery, RegExp]>([
    ["wrong_key", /signature/i],
    ["wrong_aud", /"aud"/],
    ["wrong_nonce", /"nonce"/],
    ["expired", /"exp"/],
  ])("refuses an ID token forged with %s and signs no one in", async (forgery, reason) => {
    issuer.forgery = forgery;
    const subject = `agent-${forgery}`;
    const session = await start(subject);
    const page = await openCallback(await issuer.authorize(session.authorize_url));
    expect(page.status).toBe(400);
    expect(page.text).toContain("Sign-in failed");
    const polled = await poll(session.session_id);
    expect(polled.status).toBe(400);
    expect(polled.body.code).toBe("sign_in_failed");
    expect(polled.body.detail).toMatch(reason);
    expect(await identitiesOf(subject)).toEqual([]);
  });

  // A wrong issuer (RFC 9207 mix-up) fails the session it names; a state no session has, or none, touches no session.
  it.each([
    ["iss", "https://evil.example", "(issuer)", "sign_in_failed"],
    ["state", "a-state-nobody-issued", "does not belong to any sign-in", "authorization_pending"],
    ["state", undefined, "was opened without", "authorization_pending"],
  ])("refuses a callback with %s=%s before the code is redeemed", async (param, value, says, pollCode) => {
    const session = await start(`agent-tampered-${param}`);
    const redirect = await issuer.authorize(session.authorize_url);
    if (value === undefined) redirect.searchParams.delete(param);
    else redirect.searchParams.set(param, value);
    const before = issuer.tokenRequests;
    const page = await openCallback(redirect);
    expect(page.status).toBe(400);
    expect(page.text).toContain(says);
    expect(issuer.tokenRequests).toBe(before);
    expect((await poll(session.session_id)).body.code).toBe(pollCode);
  });
});

describe("AgentID sign-in when things go wrong", () => {
  it("shows a 503 page and fails the sign-in when the provider is down at the token endpoint", async () => {
    issuer.tokenEndpointDown = true;
    const session = await start("agent-unlucky");
    const page = await openCallback(await issuer.authorize(session.authorize_url));
    expect(page.status).toBe(503);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const polled = await poll(session.session_id);
    expect(polled.body).toMatchObject({ code: "sign_in_failed", detail: expect.stringContaining("HTTP 503") });
  });

  it("answers 429 with Retry-After to the 21st start from one IP address in ten minutes", async () => {
    const from = (ip: string) => ({ headers: { "x-forwarded-for": ip } });
    for (let i = 0; i < 20; i++) expect((await api.post("/v1/auth/agentid/start", {}, from("203.0.113.7"))).status).toBe(200);
    const limited = await api.post("/v1/auth/agentid/start", {}, from("203.0.113.7"));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await api.post("/v1/auth/agentid/start", {}, from("203.0.113.8"))).status).toBe(200);
  });
});

describe("AgentID configuration", () => {
  it("answers 404 on start, poll and callback when AgentID is not configured", async () => {
    const plain = await startTestService();
    try {
      const papi = new Api(plain.baseUrl);
      const started = await papi.post("/v1/auth/agentid/start");
      expect(started.status).toBe(404);
      expect(started.body.code).toBe("not_found");
      expect((await papi.post("/v1/auth/agentid/start", { login_hint: "x" })).status).toBe(404);
      expect((await papi.post("/v1/auth/agentid/poll", { session_id: "sess_x" })).status).toBe(404);
      expect((await papi.get("/v1/auth/agentid/callback?code=x&state=y")).status).toBe(404);
      const methods = (await papi.get("/.well-known/service.json")).body.auth.methods.map((m: { type: string }) => m.type);
      expect(methods).not.toContain("agentid");
    } finally {
      await plain.stop();
    }
    const methods = (await api.get("/.well-known/service.json")).body.auth.methods.map((m: { type: string }) => m.type);
    expect(methods).toContain("agentid");
  });

  it("answers 503 service_unavailable on start while the issuer cannot be reached", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const down = await startTestService({ env: { AGENTID_ISSUER: `http://127.0.0.1:${closedPort}`, AGENTID_CLIENT_ID: "c" } });
    try {
      const res = await new Api(down.baseUrl).post("/v1/auth/agentid/start");
      expect(res.status).toBe(503);
      expect(res.body.code).toBe("service_unavailable");
      expect(res.headers.get("retry-after")).toBe("30");
    } finally {
      await down.stop();
    }
  });
});
