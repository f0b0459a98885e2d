import { createServer } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { accountIdentities } from "../../core/db/schema/account-identities.js";
import { Api } from "../../harness/api.js";
import { type Forgery, OidcStandIn } from "../support/oidc-stand-in.js";
import { freshDatabase, onPostgres, startTestService, type TestService } from "../support/service.js";

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
  issuer.discoveryDown = false;
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

  const START = "/v1/auth/agentid/start";
  const POLL = "/v1/auth/agentid/poll";
  const CALLBACK = "/v1/auth/agentid/callback";
  // Hand-picked odd requests to the three routes: each a clear 4xx, never a 500.
  it.each<[string, string, string, { raw?: string; contentType?: string }, number]>([
    ["start: a JSON null", "POST", START, { raw: "null" }, 400],
    ["start: broken JSON", "POST", START, { raw: "{" }, 400],
    ["start: an array", "POST", START, { raw: "[]" }, 422],
    ["start: a numeric hint", "POST", START, { raw: '{"login_hint":42}' }, 422],
    ["start: a null hint", "POST", START, { raw: '{"login_hint":null}' }, 422],
    ["start: a hint too long", "POST", START, { raw: JSON.stringify({ login_hint: "a".repeat(255) }) }, 422],
    ["start: a NUL in the hint", "POST", START, { raw: '{"login_hint":"\\u0000"}' }, 422],
    ["start: an unknown field", "POST", START, { raw: '{"__proto__":{"x":1}}' }, 422],
    ["start: a form body", "POST", START, { raw: "login_hint=x", contentType: "application/x-www-form-urlencoded" }, 415],
    ["poll: no body", "POST", POLL, {}, 422],
    ["poll: no session_id", "POST", POLL, { raw: "{}" }, 422],
    ["poll: a numeric session_id", "POST", POLL, { raw: '{"session_id":42}' }, 422],
    ["poll: an object session_id", "POST", POLL, { raw: '{"session_id":{"$ne":1}}' }, 422],
    ["poll: a session_id too long", "POST", POLL, { raw: JSON.stringify({ session_id: "x".repeat(101) }) }, 422],
    ["poll: an unknown session_id", "POST", POLL, { raw: '{"session_id":"sess_unknown"}' }, 404],
    ["callback: no query", "GET", CALLBACK, {}, 400],
    ["callback: a garbage state, code and iss", "GET", `${CALLBACK}?state=garbage&code=garbage&iss=garbage`, {}, 400],
    ["callback: state twice", "GET", `${CALLBACK}?state=a&state=b`, {}, 422],
    ["callback: state as an array", "GET", `${CALLBACK}?state[]=x`, {}, 400],
    ["callback: state as an object", "GET", `${CALLBACK}?state[a]=b&__proto__[a]=1`, {}, 400],
    ["callback: a bad percent escape", "GET", `${CALLBACK}?state=%ZZ&error=%ZZ`, {}, 400],
    ["callback: a NUL in state", "GET", `${CALLBACK}?state=%00`, {}, 422],
    ["callback: a code too long", "GET", `${CALLBACK}?state=x&code=${"c".repeat(5000)}`, {}, 422],
    ["callback: an error with no known state", "GET", `${CALLBACK}?error=access_denied&state=garbage`, {}, 400],
  ])("answers %s with a %i", async (_label, method, path, options, status) => {
    const res = await api.request(method, path, { ...options, unchecked: true });
    expect(res.status).toBe(status);
    if (path.startsWith(CALLBACK) && status === 400) expect(res.text).toContain("Sign-in failed");
    else expect(res.body).toMatchObject({ status, code: expect.any(String) });
  });

  it.each([
    ["a code the provider never issued", { code: "garbage" }, 1, "invalid_grant"],
    ["no code", {}, 0, "code"],
    ["an error with markup in its description", { error: "server_error", error_description: "<script>alert(1)</script>" }, 0, "server_error"],
  ])("refuses a callback with a real state but %s, and fails that session", async (_label, extra, tokenRequests, says) => {
    const session = await start(`agent-odd-${says}`);
    const state = (await issuer.authorize(session.authorize_url)).searchParams.get("state")!;
    const before = issuer.tokenRequests;
    const page = await api.get(`${CALLBACK}?${new URLSearchParams({ state, iss: issuer.issuer, ...extra })}`);
    expect(page.status).toBe(400);
    expect(page.text).toContain("Sign-in failed");
    expect(page.text).not.toContain("<script>");
    expect(issuer.tokenRequests - before).toBe(tokenRequests);
    const polled = await poll(session.session_id);
    expect(polled.body).toMatchObject({ code: "sign_in_failed", detail: expect.stringContaining(says) });
  });

  it("answers HEAD on the callback with 405 and leaves the one-time code unspent", async () => {
    const session = await start("agent-head");
    const redirect = await issuer.authorize(session.authorize_url);
    const before = issuer.tokenRequests;
    const head = await api.request("HEAD", redirect.pathname + redirect.search, { unchecked: true });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("GET");
    expect(issuer.tokenRequests).toBe(before);
    expect((await openCallback(redirect)).status).toBe(200);
    expect((await poll(session.session_id)).status).toBe(200);
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
      expect((await papi.post("/v1/auth/agentid/start", {})).status).toBe(404);
      expect((await papi.post("/v1/auth/agentid/start", { login_hint: "" })).status).toBe(404);
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

  it("reads the discovery document on first use and keeps it; a failed read is a 503 and is not kept", async () => {
    const fresh = await startTestService({ env: { AGENTID_ISSUER: issuer.issuer, AGENTID_CLIENT_ID: "agentline-public" } });
    try {
      const fapi = new Api(fresh.baseUrl);
      issuer.discoveryDown = true;
      const down = await fapi.post("/v1/auth/agentid/start", {});
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ code: "service_unavailable" });
      issuer.discoveryDown = false;
      const reads = issuer.discoveryRequests;
      for (let i = 0; i < 3; i++) expect((await fapi.post("/v1/auth/agentid/start", {})).status).toBe(200);
      expect(issuer.discoveryRequests).toBe(reads + 1);
    } finally {
      await fresh.stop();
    }
  });

  it("treats an empty or blank login_hint as none", async () => {
    for (const loginHint of ["", "   "]) {
      const res = await api.post("/v1/auth/agentid/start", { login_hint: loginHint });
      expect(res.status).toBe(200);
      expect(new URL(res.body.authorize_url).searchParams.has("login_hint")).toBe(false);
    }
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

describe.runIf(onPostgres)("AgentID sign-in across processes (PostgreSQL)", () => {
  it("is started by one process, completed and collected by another: sessions are rows", async () => {
    const database = await freshDatabase();
    // One public address for both, as behind a load balancer: the redirect URI is the same.
    const a = await startTestService({ databaseUrl: database.url, env: { AGENTID_ISSUER: issuer.issuer, AGENTID_CLIENT_ID: "agentline-public" } });
    const b = await startTestService({
      databaseUrl: database.url,
      env: { AGENTID_ISSUER: issuer.issuer, AGENTID_CLIENT_ID: "agentline-public", BASE_URL: a.baseUrl },
    });
    try {
      const onA = new Api(a.baseUrl);
      const onB = new Api(b.baseUrl);
      const session = (await onA.post("/v1/auth/agentid/start", { login_hint: "agent-two-processes" })).body;
      const redirect = await issuer.authorize(session.authorize_url);
      expect(redirect.origin).toBe(a.baseUrl);
      expect((await onB.get(redirect.pathname + redirect.search)).status).toBe(200);
      const collected = await onB.post("/v1/auth/agentid/poll", { session_id: session.session_id });
      expect(collected.status).toBe(200);
      expect((await onA.post("/v1/auth/agentid/poll", { session_id: session.session_id })).status).toBe(410);
      expect((await onA.get("/v1/agents", { key: collected.body.api_key })).status).toBe(200);
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });
});
