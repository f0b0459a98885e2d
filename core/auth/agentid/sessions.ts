import { and, eq, gt, isNotNull, lt } from "drizzle-orm";
import { findOrCreateAccountByIdentity } from "../../accounts/accounts.js";
import { usdToMicros } from "../../billing/money.js";
import type { AgentIdSettings } from "../../config.js";
import type { Core } from "../../context.js";
import { agentIdSessions } from "../../db/schema/agentid-sessions.js";
import { AppError } from "../../errors.js";
import { openSecret, sealSecret } from "../../webhooks/secret-box.js";
import { mintApiKey } from "../api-keys.js";
import { consumeRateLimits } from "../rate-limit.js";
import { hashToken, randomToken } from "../tokens.js";
import { AgentIdClient, type Redemption } from "./oidc-client.js";

/** The path the identity provider redirects to; `BASE_URL` + this must be registered with it. */
export const AGENTID_CALLBACK_PATH = "/v1/auth/agentid/callback";

/** RFC 8628's default polling interval, and its slow_down step. */
const POLL_INTERVAL_S = 5;
const SLOW_DOWN_STEP_S = 5;
const MAX_POLL_INTERVAL_S = 60;
// Finished or abandoned sessions are kept a day (so a late poll still gets a precise answer), then dropped.
const SESSION_RETENTION_MS = 24 * 3_600_000;

/**
 * Per-IP limits. Each start reaches the provider, so starts are held to a few; polls are paced
 * per session by slow_down, and session ids cannot be guessed, so the poll limit is loose.
 */
export const AGENTID_LIMITS = {
  startsPerIp: 20,
  startWindowMs: 10 * 60_000,
  pollsPerIp: 120,
  pollWindowMs: 60_000,
} as const;

/** What the callback shows the person in the browser. */
export interface CallbackPage {
  status: 200 | 400 | 503;
  outcome: "signed_in" | "denied" | "failed";
  message: string;
  /** Signed in from another sign-in page: where the browser goes on (instead of this page). */
  continueUrl?: string;
}

const clients = new WeakMap<Core, AgentIdClient>();

/**
 * The relying party, made on first use: discovery is a network call the server's start need not
 * wait for. Unconfigured, every AgentID route answers the 404 the contract gives for it.
 */
function agentIdClient(core: Core): { settings: AgentIdSettings; client: AgentIdClient } {
  const settings = core.config.agentId;
  if (!settings) throw new AppError("not_found", "AgentID sign-in is not enabled on this server. Sign in with an e-mail code: POST /v1/auth/otp.");
  let client = clients.get(core);
  if (!client) clients.set(core, (client = new AgentIdClient(settings, core.logger)));
  return { settings, client };
}

const sealKey = (core: Core) => core.secrets.derive("agentid-session");
const redirectUri = (core: Core) => core.baseUrl + AGENTID_CALLBACK_PATH;

/**
 * Starts a sign-in: an authorization URL for the agent (or its user) to open, and a session id
 * to poll. The session id is a bearer secret of its own and never appears in the URL.
 */
export async function startAgentIdSignIn(core: Core, input: { loginHint?: string | undefined; ip: string; continueUrl?: string }) {
  const { settings, client } = agentIdClient(core);
  const now = core.now();
  await core.db.transaction((tx) =>
    consumeRateLimits(
      tx,
      [
        {
          key: `agentid:start:ip:${input.ip}`,
          limit: AGENTID_LIMITS.startsPerIp,
          windowMs: AGENTID_LIMITS.startWindowMs,
          label: "AgentID sign-ins from this IP address",
        },
      ],
      now,
    ),
  );
  const request = await client.authorizationRequest(redirectUri(core), input.loginHint);
  const sessionId = randomToken("sess_");
  await core.db.insert(agentIdSessions).values({
    sessionHash: hashToken(sessionId),
    stateHash: hashToken(request.state),
    sealedChecks: sealSecret(sealKey(core), JSON.stringify({ nonce: request.nonce, codeVerifier: request.codeVerifier })),
    intervalS: POLL_INTERVAL_S,
    continueUrl: input.continueUrl ?? null,
    expiresAt: new Date(now.getTime() + settings.sessionTtlS * 1000),
    createdAt: now,
  });
  await core.db.delete(agentIdSessions).where(lt(agentIdSessions.expiresAt, new Date(now.getTime() - SESSION_RETENTION_MS)));
  return { authorize_url: request.authorizeUrl, session_id: sessionId, expires_in: settings.sessionTtlS, interval: POLL_INTERVAL_S };
}

/**
 * The identity provider's redirect. The session is found by `state` and claimed at once, so a
 * replayed or concurrent callback finds nothing to claim; openid-client then checks `state` and
 * `iss` before it redeems the code, and the ID token after. The outcome is recorded on the
 * session for the poll, and described for the browser.
 */
export async function completeAgentIdCallback(core: Core, query: URLSearchParams): Promise<CallbackPage> {
  const { client } = agentIdClient(core);
  const state = query.get("state");
  if (!state)
    return { status: 400, outcome: "failed", message: "This page was opened without the sign-in's state. Open the sign-in link again from the start." };
  const now = core.now();
  const stateHash = hashToken(state);
  const [session] = await core.db
    .update(agentIdSessions)
    .set({ status: "redeeming" })
    .where(and(eq(agentIdSessions.stateHash, stateHash), eq(agentIdSessions.status, "pending"), gt(agentIdSessions.expiresAt, now)))
    .returning({ sessionHash: agentIdSessions.sessionHash, sealedChecks: agentIdSessions.sealedChecks, continueUrl: agentIdSessions.continueUrl });
  if (!session) return refusedCallback(core, stateHash, now);

  const checks = openChecks(core, session.sealedChecks!);
  if (!checks) {
    // Sealed under a SECRET_KEY this server no longer has: the sign-in began before it changed.
    const failed = { kind: "failed", reason: "This sign-in began before the server's secret key changed, so it cannot be finished." } as const;
    await recordRedemption(core, session.sessionHash, failed);
    return { status: 400, outcome: "failed", message: `${failed.reason} Nothing was signed in; start a new sign-in.` };
  }
  const callbackUrl = new URL(redirectUri(core));
  callbackUrl.search = query.toString();
  const result = await client.redeem(callbackUrl, { state, ...checks });
  await recordRedemption(core, session.sessionHash, result);
  switch (result.kind) {
    case "signed_in":
      if (session.continueUrl) return { status: 200, outcome: "signed_in", message: "You are signed in to agentline.", continueUrl: session.continueUrl };
      return {
        status: 200,
        outcome: "signed_in",
        message: "You are signed in to agentline. You can close this window: your agent collects its API key by polling.",
      };
    case "denied":
      return { status: 200, outcome: "denied", message: `${result.reason} You can close this window.` };
    case "failed":
      return { status: 400, outcome: "failed", message: `${result.reason} Nothing was signed in; start a new sign-in.` };
    case "unavailable":
      return { status: 503, outcome: "failed", message: `${result.reason} Nothing was signed in; start a new sign-in shortly.` };
  }
}

/** The sign-in's nonce and PKCE verifier, or undefined when they cannot be opened with this server's key. */
function openChecks(core: Core, sealed: string): { nonce: string; codeVerifier: string } | undefined {
  try {
    return JSON.parse(openSecret(sealKey(core), sealed)) as { nonce: string; codeVerifier: string };
  } catch {
    return undefined;
  }
}

/** Why a callback found no pending session to claim. */
async function refusedCallback(core: Core, stateHash: string, now: Date): Promise<CallbackPage> {
  const [known] = await core.db
    .select({ status: agentIdSessions.status, expiresAt: agentIdSessions.expiresAt })
    .from(agentIdSessions)
    .where(eq(agentIdSessions.stateHash, stateHash));
  const message = !known
    ? "This sign-in link does not belong to any sign-in this service started."
    : known.status === "pending" && known.expiresAt <= now
      ? "This sign-in has expired."
      : "This sign-in link was already used; a link works once.";
  return { status: 400, outcome: "failed", message: `${message} Start a new sign-in.` };
}

async function recordRedemption(core: Core, sessionHash: string, result: Redemption): Promise<void> {
  const done = { sealedChecks: null };
  if (result.kind !== "signed_in") {
    await core.db
      .update(agentIdSessions)
      .set({ ...done, status: result.kind === "denied" ? "denied" : "failed", failure: result.reason })
      .where(eq(agentIdSessions.sessionHash, sessionHash));
    return;
  }
  const now = core.now();
  await core.db.transaction(async (tx) => {
    const account = await findOrCreateAccountByIdentity(tx, result, { creditMicros: usdToMicros(core.config.signupCreditUsd), at: now });
    await tx
      .update(agentIdSessions)
      .set({ ...done, status: "completed", accountId: account.accountId, accountCreated: account.created })
      .where(eq(agentIdSessions.sessionHash, sessionHash));
  });
}

type PollOutcome =
  | { kind: "key"; result: { api_key: string; key_id: string; account_id: string; account_created: boolean } }
  | { kind: "problem"; error: AppError };

/**
 * RFC 8628's polling, over the session row: `authorization_pending` until the callback,
 * `slow_down` when polled sooner than the interval, then the API key exactly once (minted
 * now, so no key ever rests in the database), then 410. A refusal is `access_denied`, a
 * failed check `sign_in_failed`, a session past its lifetime `expired_token`.
 */
export async function pollAgentIdSignIn(core: Core, input: { sessionId: string; ip: string }) {
  agentIdClient(core); // the 404 while unconfigured
  const now = core.now();
  await core.db.transaction((tx) =>
    consumeRateLimits(
      tx,
      [
        {
          key: `agentid:poll:ip:${input.ip}`,
          limit: AGENTID_LIMITS.pollsPerIp,
          windowMs: AGENTID_LIMITS.pollWindowMs,
          label: "AgentID polls from this IP address",
        },
      ],
      now,
    ),
  );
  const sessionHash = hashToken(input.sessionId);
  // The problem is thrown after the commit: the poll time it records must stick.
  const outcome = await core.db.transaction(async (tx): Promise<PollOutcome> => {
    const [session] = await tx.select().from(agentIdSessions).where(eq(agentIdSessions.sessionHash, sessionHash)).for("update");
    const problem = (error: AppError): PollOutcome => ({ kind: "problem", error });
    if (!session) return problem(new AppError("not_found", "No AgentID sign-in has this session_id. Start one with POST /v1/auth/agentid/start."));
    // RFC 8628's `interval`, also as Retry-After for clients that know only that.
    const retry = (interval: number, extra: Record<string, unknown> = {}) => ({ headers: { "Retry-After": String(interval) }, extra: { interval, ...extra } });
    switch (session.status) {
      case "claimed":
        return problem(new AppError("gone", "This sign-in's API key was already handed out, once. Start a new sign-in for another key."));
      case "denied":
        return problem(new AppError("access_denied", session.failure ?? "The sign-in was refused at the identity provider."));
      case "failed":
        return problem(new AppError("sign_in_failed", session.failure ?? "The sign-in failed."));
    }
    if (session.expiresAt <= now) return problem(new AppError("expired_token", "This sign-in expired before it was completed. Start a new one."));
    if (session.status === "completed") {
      const key = await mintApiKey(tx, session.accountId!, "AgentID sign-in");
      await tx.update(agentIdSessions).set({ status: "claimed", lastPolledAt: now }).where(eq(agentIdSessions.sessionHash, sessionHash));
      return { kind: "key", result: { api_key: key.api_key, key_id: key.key_id, account_id: session.accountId!, account_created: session.accountCreated } };
    }
    const tooSoon = session.lastPolledAt !== null && now.getTime() - session.lastPolledAt.getTime() < session.intervalS * 1000;
    const intervalS = tooSoon ? Math.min(session.intervalS + SLOW_DOWN_STEP_S, MAX_POLL_INTERVAL_S) : session.intervalS;
    await tx.update(agentIdSessions).set({ lastPolledAt: now, intervalS }).where(eq(agentIdSessions.sessionHash, sessionHash));
    if (tooSoon) return problem(new AppError("slow_down", `Polled too soon: wait ${intervalS} seconds between polls from now on.`, retry(intervalS)));
    const expiresIn = Math.ceil((session.expiresAt.getTime() - now.getTime()) / 1000);
    return problem(
      new AppError(
        "authorization_pending",
        `The sign-in has not been completed at the identity provider yet. Poll again in ${intervalS} seconds.`,
        retry(intervalS, { expires_in: expiresIn }),
      ),
    );
  });
  if (outcome.kind === "problem") throw outcome.error;
  return outcome.result;
}

/**
 * The account of a completed sign-in that was started from another sign-in page (with a
 * `continueUrl`), exactly once: that page signs the browser in with it, and no key is minted.
 * Null for a session that is unknown, not completed, already claimed, or not such a sign-in.
 */
export async function claimAgentIdAccount(core: Core, sessionId: string): Promise<string | null> {
  const [claimed] = await core.db
    .update(agentIdSessions)
    .set({ status: "claimed" })
    .where(
      and(
        eq(agentIdSessions.sessionHash, hashToken(sessionId)),
        eq(agentIdSessions.status, "completed"),
        isNotNull(agentIdSessions.continueUrl),
        gt(agentIdSessions.expiresAt, core.now()),
      ),
    )
    .returning({ accountId: agentIdSessions.accountId });
  return claimed?.accountId ?? null;
}
