import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { completeAgentIdCallback, pollAgentIdSignIn, startAgentIdSignIn } from "../../core/auth/agentid/sessions.js";
import { hashToken } from "../../core/auth/tokens.js";
import { agentIdSessions } from "../../core/db/schema/agentid-sessions.js";
import { apiKeys } from "../../core/db/schema/api-keys.js";
import type { AppError } from "../../core/errors.js";
import { openSecret, sealSecret } from "../../core/webhooks/secret-box.js";
import { Api } from "../../harness/api.js";
import { OidcStandIn } from "../support/oidc-stand-in.js";
import { startTestService, type TestService } from "../support/service.js";

// The sign-in sessions, driven through their functions on a service's core, against the loopback
// stand-in issuer, on a clock the tests set.
let issuer: OidcStandIn;
let service: TestService;
let clock: Date;
let ipCounter = 0;
const TTL_S = 600;

beforeAll(async () => {
  issuer = await OidcStandIn.start();
  service = await startTestService({ env: { AGENTID_ISSUER: issuer.issuer, AGENTID_CLIENT_ID: "agentline-sessions", AGENTID_SESSION_TTL_S: String(TTL_S) } });
  service.core.now = () => clock;
});
afterAll(async () => {
  await service?.stop();
  await issuer?.close();
});
beforeEach(() => {
  clock = new Date(Date.now());
  issuer.tokenEndpointDown = false;
  issuer.tokenFault = "none";
});

/** A fresh address per call site, so that the per-IP limits of one test do not reach another. */
const anIp = () => `198.51.100.${++ipCounter}`;
const later = (seconds: number) => (clock = new Date(clock.getTime() + seconds * 1000));

async function start(subject = "agent-session") {
  const started = await startAgentIdSignIn(service.core, { loginHint: subject, ip: anIp() });
  return { ...started, state: new URL(started.authorize_url).searchParams.get("state")! };
}
const callback = (query: Record<string, string>) => completeAgentIdCallback(service.core, new URLSearchParams(query));
const authorized = async (authorizeUrl: string) => (await issuer.authorize(authorizeUrl)).searchParams;
const poll = (sessionId: string, ip = anIp()) => pollAgentIdSignIn(service.core, { sessionId, ip });
/** The problem a poll answers (it throws it). */
const problem = (sessionId: string, ip?: string) =>
  poll(sessionId, ip).then(
    (result) => expect.unreachable(`a key: ${JSON.stringify(result)}`),
    (error: AppError) => error,
  );
const row = async (sessionId: string) =>
  (
    await service.core.db
      .select()
      .from(agentIdSessions)
      .where(eq(agentIdSessions.sessionHash, hashToken(sessionId)))
  )[0]!;

describe("AgentID callback pages", () => {
  it("tells the browser, word for word, how the sign-in ended", async () => {
    const signedIn = await start();
    expect(await completeAgentIdCallback(service.core, await authorized(signedIn.authorize_url))).toEqual({
      status: 200,
      outcome: "signed_in",
      message: "You are signed in to agentline. You can close this window: your agent collects its API key by polling.",
    });
    const denied = await start();
    expect(await callback({ state: denied.state, iss: issuer.issuer, error: "access_denied", error_description: "No thanks" })).toEqual({
      status: 200,
      outcome: "denied",
      message: "The sign-in was refused at the identity provider: No thanks. You can close this window.",
    });
    const failed = await start();
    expect(await callback({ state: failed.state, iss: issuer.issuer, error: "server_error" })).toEqual({
      status: 400,
      outcome: "failed",
      message: "The identity provider answered server_error. Nothing was signed in; start a new sign-in.",
    });
    const unavailable = await start();
    issuer.tokenEndpointDown = true;
    expect(await completeAgentIdCallback(service.core, await authorized(unavailable.authorize_url))).toEqual({
      status: 503,
      outcome: "failed",
      message: "The identity provider failed (HTTP 503). Nothing was signed in; start a new sign-in shortly.",
    });
  });

  it("refuses a callback without state, or with a state no sign-in has, word for word", async () => {
    expect(await callback({ code: "c" })).toEqual({
      status: 400,
      outcome: "failed",
      message: "This page was opened without the sign-in's state. Open the sign-in link again from the start.",
    });
    expect(await callback({ state: "nobody-issued-this", code: "c" })).toEqual({
      status: 400,
      outcome: "failed",
      message: "This sign-in link does not belong to any sign-in this service started. Start a new sign-in.",
    });
  });

  it("fails a sign-in sealed under a secret key the server no longer has, with a 400 page and a failed poll, not a 500", async () => {
    const started = await start();
    // What a SECRET_KEY changed between the start and the callback leaves: checks this server cannot open.
    const foreign = sealSecret(randomBytes(32), JSON.stringify({ nonce: "n", codeVerifier: "v" }));
    await service.core.db
      .update(agentIdSessions)
      .set({ sealedChecks: foreign })
      .where(eq(agentIdSessions.sessionHash, hashToken(started.session_id)));
    expect(await completeAgentIdCallback(service.core, await authorized(started.authorize_url))).toEqual({
      status: 400,
      outcome: "failed",
      message: "This sign-in began before the server's secret key changed, so it cannot be finished. Nothing was signed in; start a new sign-in.",
    });
    const session = await row(started.session_id);
    expect(session.status).toBe("failed");
    expect(session.sealedChecks).toBeNull();
    const refused = await problem(started.session_id);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    expect(refused.detail).toContain("secret key changed");
  });

  it("calls a callback at the very end of the session's lifetime expired", async () => {
    const session = await start();
    const query = await authorized(session.authorize_url);
    later(TTL_S);
    expect(await completeAgentIdCallback(service.core, query)).toEqual({
      status: 400,
      outcome: "failed",
      message: "This sign-in has expired. Start a new sign-in.",
    });
  });

  it("calls a replayed callback used, not expired, even once the session's lifetime is over", async () => {
    const session = await start();
    const query = await authorized(session.authorize_url);
    expect((await completeAgentIdCallback(service.core, query)).outcome).toBe("signed_in");
    const used = { status: 400, outcome: "failed", message: "This sign-in link was already used; a link works once. Start a new sign-in." };
    expect(await completeAgentIdCallback(service.core, query)).toEqual(used);
    later(TTL_S + 1);
    expect(await completeAgentIdCallback(service.core, query)).toEqual(used);
  });
});

describe("AgentID session rows", () => {
  it("seals the nonce and PKCE verifier under the agentid-session key, and clears them once the callback used them", async () => {
    const signedIn = await start();
    const sealed = (await row(signedIn.session_id)).sealedChecks!;
    const checks = JSON.parse(openSecret(service.core.secrets.derive("agentid-session"), sealed));
    expect(checks).toEqual({ nonce: new URL(signedIn.authorize_url).searchParams.get("nonce"), codeVerifier: expect.stringMatching(/^[\w-]{43}$/) });
    await completeAgentIdCallback(service.core, await authorized(signedIn.authorize_url));
    expect(await row(signedIn.session_id)).toMatchObject({ status: "completed", sealedChecks: null });

    const failed = await start();
    await callback({ state: failed.state, iss: issuer.issuer, error: "server_error" });
    expect(await row(failed.session_id)).toMatchObject({ status: "failed", sealedChecks: null, failure: "The identity provider answered server_error." });
  });

  it("holds a session as redeeming while its code is at the provider, and answers a provider that times out with a 503 page", async () => {
    issuer.tokenFault = "hang";
    const session = await start();
    const before = issuer.tokenRequests;
    const page = completeAgentIdCallback(service.core, await authorized(session.authorize_url));
    await vi.waitFor(() => expect(issuer.tokenRequests).toBe(before + 1));
    expect((await row(session.session_id)).status).toBe("redeeming");
    expect(await page).toEqual({
      status: 503,
      outcome: "failed",
      message: "The identity provider could not be reached. Nothing was signed in; start a new sign-in shortly.",
    });
  }, 15_000);
});

describe("AgentID polling", () => {
  it("answers a pending poll with the seconds left and the interval, and slow_down, word for word", async () => {
    const session = await start();
    later(1.5);
    const pending = await problem(session.session_id);
    expect(pending).toMatchObject({
      code: "authorization_pending",
      detail: "The sign-in has not been completed at the identity provider yet. Poll again in 5 seconds.",
      extra: { interval: 5, expires_in: TTL_S - 1 },
      headers: { "Retry-After": "5" },
    });
    later(4.999);
    expect(await problem(session.session_id)).toMatchObject({
      code: "slow_down",
      detail: "Polled too soon: wait 10 seconds between polls from now on.",
      extra: { interval: 10 },
    });
  });

  it("takes a poll exactly one interval after the last as on time", async () => {
    const session = await start();
    expect((await problem(session.session_id)).code).toBe("authorization_pending");
    later(5);
    expect((await problem(session.session_id)).code).toBe("authorization_pending");
  });

  it("answers expired_token to a poll at the very end of the session's lifetime", async () => {
    const session = await start();
    later(TTL_S);
    expect(await problem(session.session_id)).toMatchObject({
      code: "expired_token",
      detail: "This sign-in expired before it was completed. Start a new one.",
    });
  });

  it("hands out one key named for AgentID to a new account with the signup credit, then answers gone", async () => {
    const session = await start("agent-session-key");
    await completeAgentIdCallback(service.core, await authorized(session.authorize_url));
    const key = await poll(session.session_id);
    expect(key.account_created).toBe(true);
    const [minted] = await service.core.db.select().from(apiKeys).where(eq(apiKeys.keyId, key.key_id));
    expect(minted).toMatchObject({ accountId: key.account_id, name: "AgentID sign-in" });
    expect((await new Api(service.baseUrl).get("/v1/billing/balance", { key: key.api_key })).body.balance).toBe("5.000000");
    expect(await row(session.session_id)).toMatchObject({ status: "claimed" });
    expect(await problem(session.session_id)).toMatchObject({
      code: "gone",
      detail: "This sign-in's API key was already handed out, once. Start a new sign-in for another key.",
    });
  });

  it("answers 404 to an unknown session_id, with where to start", async () => {
    expect(await problem("sess_unknown")).toMatchObject({
      code: "not_found",
      detail: "No AgentID sign-in has this session_id. Start one with POST /v1/auth/agentid/start.",
    });
  });

  it("limits polls to 120 a minute per IP address, and says which limit", async () => {
    const session = await start();
    const ip = anIp();
    for (let i = 0; i < 120; i++) expect((await problem(session.session_id, ip)).code).not.toBe("rate_limited");
    const limited = await problem(session.session_id, ip);
    expect(limited.code).toBe("rate_limited");
    expect(limited.detail).toMatch(/^Too many AgentID polls from this IP address: at most 120 per 1 minutes/);
    expect((await problem(session.session_id, anIp())).code).not.toBe("rate_limited");
  });

  it("says which limit a 21st start from one IP address hits", async () => {
    const ip = anIp();
    for (let i = 0; i < 20; i++) await startAgentIdSignIn(service.core, { ip });
    await expect(startAgentIdSignIn(service.core, { ip })).rejects.toMatchObject({
      code: "rate_limited",
      detail: expect.stringMatching(/^Too many AgentID sign-ins from this IP address: at most 20 per 10 minutes/),
    });
  });
});

describe("AgentID unconfigured", () => {
  it("answers 404 pointing at e-mail sign-in", async () => {
    const plain = await startTestService();
    try {
      await expect(pollAgentIdSignIn(plain.core, { sessionId: "sess_x", ip: anIp() })).rejects.toMatchObject({
        code: "not_found",
        detail: "AgentID sign-in is not enabled on this server. Sign in with an e-mail code: POST /v1/auth/otp.",
      });
    } finally {
      await plain.stop();
    }
  });
});
