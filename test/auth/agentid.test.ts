import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { REFUSING_USER, TestOidcProvider } from "../support/oidc-provider.js";
import { startTestService, type TestService } from "../support/service.js";

// One real OpenID Connect provider (oidc-provider) on loopback, as the issuer of a confidential client.
let provider: TestOidcProvider;
let service: TestService;
let api: Api;
let callbackUrl: string;
let clockOffsetMs = 0;
const TTL_S = 600;

beforeAll(async () => {
  provider = await TestOidcProvider.start();
  service = await startTestService({
    env: {
      AGENTID_ISSUER: provider.issuer,
      AGENTID_CLIENT_ID: "agentline-test",
      AGENTID_CLIENT_SECRET: "a-client-secret-for-tests",
      AGENTID_SESSION_TTL_S: String(TTL_S),
    },
  });
  callbackUrl = `${service.baseUrl}/v1/auth/agentid/callback`;
  await provider.register({ clientId: "agentline-test", clientSecret: "a-client-secret-for-tests", redirectUri: callbackUrl });
  service.core.now = () => new Date(Date.now() + clockOffsetMs);
  api = new Api(service.baseUrl);
});
afterAll(async () => {
  await service?.stop();
  await provider?.close();
});
beforeEach(() => {
  clockOffsetMs = 0;
});

/** Moves the service's clock (polling intervals, session lifetimes) forward. */
const advance = (seconds: number) => (clockOffsetMs += seconds * 1000);

async function start(loginHint?: string) {
  const res = await api.post("/v1/auth/agentid/start", loginHint ? { login_hint: loginHint } : undefined);
  expect(res.status).toBe(200);
  return res.body as { authorize_url: string; session_id: string; expires_in: number; interval: number };
}

const poll = (sessionId: string) => api.post("/v1/auth/agentid/poll", { session_id: sessionId });
const openCallback = (url: URL | string) => api.get(new URL(url).pathname + new URL(url).search);

/** A whole sign-in as the user named by loginHint, up to the key. */
async function signIn(loginHint: string) {
  const session = await start(loginHint);
  const page = await openCallback(await provider.authorize(session.authorize_url, callbackUrl));
  expect(page.status).toBe(200);
  advance(session.interval);
  const res = await poll(session.session_id);
  expect(res.status).toBe(200);
  return res.body as { api_key: string; account_id: string; account_created: boolean };
}

describe("AgentID sign-in against a real OpenID Connect provider", () => {
  it("signs an agent in: start, authorize at the provider, callback, then poll returns a working key once", async () => {
    const session = await start("agent-ada");
    expect(session).toMatchObject({ expires_in: TTL_S, interval: 5, session_id: expect.stringMatching(/^sess_[0-9A-Za-z]{43}$/) });
    const authorize = new URL(session.authorize_url);
    expect(authorize.origin).toBe(provider.issuer);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: "code",
      client_id: "agentline-test",
      redirect_uri: callbackUrl,
      scope: "openid",
      code_challenge_method: "S256",
      code_challenge: expect.stringMatching(/^[\w-]{43}$/),
      state: expect.any(String),
      nonce: expect.any(String),
      login_hint: "agent-ada",
    });
    expect(session.authorize_url).not.toContain(session.session_id);
    expect(session.authorize_url).not.toContain(session.session_id.slice(5, 20));

    const pending = await poll(session.session_id);
    expect(pending.status).toBe(400);
    expect(pending.body).toMatchObject({ code: "authorization_pending", interval: 5 });
    expect(pending.headers.get("retry-after")).toBe("5");

    const redirect = await provider.authorize(session.authorize_url, callbackUrl);
    expect(redirect.searchParams.get("iss")).toBe(provider.issuer);
    const page = await openCallback(redirect);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.text).toContain("You can close this window");

    advance(5);
    const signedIn = await poll(session.session_id);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({
      api_key: expect.stringMatching(/^sk_/),
      key_id: expect.stringMatching(/^key_/),
      account_id: expect.stringMatching(/^acct_/),
      account_created: true,
    });
    expect((await api.get("/v1/agents", { key: signedIn.body.api_key })).status).toBe(200);
    expect((await api.get("/v1/auth/keys", { key: signedIn.body.api_key })).body.data).toHaveLength(1);

    advance(5);
    const again = await poll(session.session_id);
    expect(again.status).toBe(410);
    expect(again.body.code).toBe("gone");
    expect(again.text).not.toContain(signedIn.body.api_key);
  });

  it("keys the account on the issuer's sub: the same sub twice is one account, another sub another", async () => {
    const first = await signIn("agent-grace");
    const second = await signIn("agent-grace");
    const other = await signIn("agent-linus");
    expect(first.account_created).toBe(true);
    expect(second).toMatchObject({ account_id: first.account_id, account_created: false });
    expect(second.api_key).not.toBe(first.api_key);
    expect(other.account_created).toBe(true);
    expect(other.account_id).not.toBe(first.account_id);
  });

  it("refuses a replayed callback, and the sign-in it belongs to still yields its key once", async () => {
    const session = await start("agent-replay");
    const redirect = await provider.authorize(session.authorize_url, callbackUrl);
    expect((await openCallback(redirect)).status).toBe(200);
    const replay = await openCallback(redirect);
    expect(replay.status).toBe(400);
    expect(replay.text).toContain("already used");
    advance(5);
    expect((await poll(session.session_id)).status).toBe(200);
  });

  it("refuses a callback carrying another session's state: the code does not redeem under it", async () => {
    const victim = await start("agent-victim");
    const attacker = await start("agent-attacker");
    const attackerRedirect = await provider.authorize(attacker.authorize_url, callbackUrl);
    const victimState = new URL(victim.authorize_url).searchParams.get("state")!;
    const forged = new URL(attackerRedirect);
    forged.searchParams.set("state", victimState);

    const page = await openCallback(forged);
    expect(page.status).toBe(400);
    expect(page.text).toContain("Sign-in failed");
    advance(5);
    const polled = await poll(victim.session_id);
    expect(polled.status).toBe(400);
    expect(polled.body.code).toBe("sign_in_failed");
    expect(polled.body.detail).toContain("invalid_grant");
  });

  it("refuses the provider's ID token when it answers another request's nonce", async () => {
    // The provider signs a genuine token, but for an authorization request this session never made.
    const session = await start("agent-nonce");
    const tampered = new URL(session.authorize_url);
    tampered.searchParams.set("nonce", "another-requests-nonce");
    const page = await openCallback(await provider.authorize(tampered.href, callbackUrl));
    expect(page.status).toBe(400);
    expect(page.text).toContain("Sign-in failed");
    advance(5);
    const polled = await poll(session.session_id);
    expect(polled.status).toBe(400);
    expect(polled.body).toMatchObject({ code: "sign_in_failed", detail: expect.stringMatching(/"nonce"/) });
  });

  it("answers access_denied when the user refuses at the provider", async () => {
    const session = await start(REFUSING_USER);
    const redirect = await provider.authorize(session.authorize_url, callbackUrl);
    expect(redirect.searchParams.get("error")).toBe("access_denied");
    const page = await openCallback(redirect);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Sign-in refused");
    const polled = await poll(session.session_id);
    expect(polled.status).toBe(400);
    expect(polled.body).toMatchObject({ code: "access_denied", detail: expect.stringContaining("The user said no") });
  });

  it("answers slow_down to a poll sooner than the interval, and adds 5 seconds to it each time", async () => {
    const session = await start();
    expect((await poll(session.session_id)).body.code).toBe("authorization_pending");
    const tooSoon = await poll(session.session_id);
    expect(tooSoon.status).toBe(400);
    expect(tooSoon.body).toMatchObject({ code: "slow_down", interval: 10 });
    expect(tooSoon.headers.get("retry-after")).toBe("10");
    advance(5);
    expect((await poll(session.session_id)).body).toMatchObject({ code: "slow_down", interval: 15 });
    advance(15);
    expect((await poll(session.session_id)).body).toMatchObject({ code: "authorization_pending", interval: 15 });
  });

  it("expires: past expires_in the poll answers expired_token and a late callback is refused", async () => {
    const session = await start("agent-late");
    const redirect = await provider.authorize(session.authorize_url, callbackUrl);
    advance(TTL_S + 1);
    const page = await openCallback(redirect);
    expect(page.status).toBe(400);
    expect(page.text).toContain("expired");
    const polled = await poll(session.session_id);
    expect(polled.status).toBe(400);
    expect(polled.body.code).toBe("expired_token");
  });

  it("answers 404 to an unknown session and 422 to a malformed start", async () => {
    expect((await poll("sess_" + "x".repeat(43))).status).toBe(404);
    expect((await api.post("/v1/auth/agentid/start", { login_hint: 42 })).status).toBe(422);
    expect((await api.post("/v1/auth/agentid/start", { other: "x" })).status).toBe(422);
  });
});
