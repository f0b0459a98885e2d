import { z } from "zod";
import { listAgentTokens, mintAgentToken, revokeAgentToken, rotateAgentToken } from "../../core/auth/agent-tokens.js";
import { AGENTID_CALLBACK_PATH, AGENTID_LIMITS, completeAgentIdCallback, pollAgentIdSignIn, startAgentIdSignIn } from "../../core/auth/agentid/sessions.js";
import { listApiKeys, mintApiKey, revokeApiKey } from "../../core/auth/api-keys.js";
import { OTP_LIMITS, requestOtp, verifyOtp } from "../../core/auth/otp.js";
import {
  AgentIdCallbackQuery,
  AgentIdPollBody,
  AgentIdSession,
  AgentIdStartBody,
  AgentToken,
  ApiKey,
  MintAgentTokenBody,
  MintedAgentToken,
  MintedKey,
  MintKeyBody,
  OtpRequestBody,
  OtpRequestResult,
  RevokedAgentToken,
  RevokedKey,
  VerifyBody,
  VerifyResult,
} from "../../core/auth/schemas.js";
import { AppError } from "../../core/errors.js";
import { listOf, Pagination } from "../../core/schemas/common.js";
import { NOTICE_PAGE_HEADERS, noticePage } from "../http/notice-page.js";
import { actorOf } from "../http/principal.js";
import { defineRoute, Reply } from "../http/route.js";

const tags = ["Auth"];

const HtmlPage = z.string().meta({ description: "A short HTML page for the person in the browser" });

export const authRoutes = [
  defineRoute({
    operationId: "requestOtp",
    method: "post",
    path: "/v1/auth/otp",
    summary: "E-mail a sign-in code",
    description:
      "Sends a 6-digit code, valid for 10 minutes and once. The answer is the same for known and unknown addresses. Limits: 3 per address and 5 per IP address per 10 minutes.",
    tags,
    auth: "none",
    body: OtpRequestBody,
    response: { status: 200, description: "The code was sent (or, with no mail server, logged)", schema: OtpRequestResult },
    errors: [429, 503],
    handler: ({ core, body, req }) => requestOtp(core, { email: body.email, ip: req.ip ?? "unknown" }),
  }),
  defineRoute({
    operationId: "verifyOtp",
    method: "post",
    path: "/v1/auth/verify",
    summary: "Exchange a sign-in code for an API key",
    description: `Creates the account on first sign-in. The \`api_key\` is shown once. Limits: ${OTP_LIMITS.verifyPerEmail} attempts per address and ${OTP_LIMITS.verifyPerIp} per IP address per 10 minutes.`,
    tags,
    auth: "none",
    body: VerifyBody,
    response: { status: 200, description: "Signed in", schema: VerifyResult },
    errors: [400, 429],
    handler: ({ core, body, req }) => verifyOtp(core, { ...body, ip: req.ip ?? "unknown" }),
  }),
  defineRoute({
    operationId: "startAgentIdSignIn",
    method: "post",
    path: "/v1/auth/agentid/start",
    summary: "Start an AgentID sign-in",
    description:
      "OpenID Connect sign-in run like a device flow: open `authorize_url`, sign in at the identity provider, and poll POST /v1/auth/agentid/poll with `session_id` every `interval` seconds. " +
      `Answers 404 while AgentID is not configured on this server (use OTP sign-in instead), 503 while the identity provider cannot be reached. Limit: ${AGENTID_LIMITS.startsPerIp} per IP address per 10 minutes.`,
    tags,
    auth: "none",
    body: AgentIdStartBody,
    bodyRequired: false,
    response: { status: 200, description: "The sign-in session", schema: AgentIdSession },
    errors: [404, 429, 503],
    handler: ({ core, body, req }) => startAgentIdSignIn(core, { loginHint: body.login_hint || undefined, ip: req.ip ?? "unknown" }),
  }),
  defineRoute({
    operationId: "pollAgentIdSignIn",
    method: "post",
    path: "/v1/auth/agentid/poll",
    summary: "Poll an AgentID sign-in",
    description:
      "RFC 8628's answers as 400 problems: `authorization_pending` until the sign-in is completed, `slow_down` when polled sooner than `interval` seconds (which then grows by 5), " +
      "`access_denied` when it was refused, `sign_in_failed` when the provider's answer did not check out, `expired_token` past `expires_in`. Then the `api_key`, exactly once; after that 410. " +
      "404 for an unknown session, or while AgentID is not configured.",
    tags,
    auth: "none",
    body: AgentIdPollBody,
    response: { status: 200, description: "Signed in: the new key, shown once", schema: VerifyResult },
    errors: [400, 404, 410, 429],
    handler: ({ core, body, req }) => pollAgentIdSignIn(core, { sessionId: body.session_id, ip: req.ip ?? "unknown" }),
  }),
  defineRoute({
    operationId: "agentIdCallback",
    method: "get",
    path: AGENTID_CALLBACK_PATH,
    summary: "AgentID redirect target",
    description:
      "Where the identity provider sends the browser back (register BASE_URL + this path as the client's redirect URI). Answers a small HTML page: signed in or refused (200), " +
      "a callback that does not check out (400), or a provider that cannot be reached (503). 404 while AgentID is not configured.",
    tags,
    auth: "none",
    query: AgentIdCallbackQuery,
    response: { status: 200, description: "Signed in, or refused by the user: you can close this window", schema: HtmlPage, contentType: "text/html" },
    otherResponses: [
      { status: 303, description: "Signed in for the OAuth sign-in page, which the browser goes back to" },
      {
        status: 400,
        description: "The callback did not check out (unknown, used or expired state; wrong issuer; a bad ID token)",
        schema: HtmlPage,
        contentType: "text/html",
      },
      { status: 503, description: "The identity provider could not be reached", schema: HtmlPage, contentType: "text/html" },
    ],
    errors: [404],
    handler: async ({ core, req }) => {
      // express answers HEAD with this handler; a link checker's HEAD would spend the one-time code.
      if (req.method === "HEAD")
        throw new AppError("method_not_allowed", "HEAD is not allowed here: opening this page completes the sign-in. Use GET.", { headers: { Allow: "GET" } });
      const page = await completeAgentIdCallback(core, new URL(req.originalUrl, "http://callback.invalid").searchParams);
      // Started from the OAuth sign-in page: the browser goes back there to carry on.
      if (page.continueUrl) return new Reply(303, undefined, { ...NOTICE_PAGE_HEADERS, Location: page.continueUrl });
      const title = page.outcome === "signed_in" ? "Signed in" : page.outcome === "denied" ? "Sign-in refused" : "Sign-in failed";
      return new Reply(page.status, noticePage(title, page.message), NOTICE_PAGE_HEADERS);
    },
  }),
  defineRoute({
    operationId: "listApiKeys",
    method: "get",
    path: "/v1/auth/keys",
    summary: "List API keys",
    description: "The account's live keys, newest first. Keys themselves are never shown again; `prefix` and `last_four` identify them.",
    tags,
    auth: "api_key",
    query: Pagination,
    response: { status: 200, description: "A page of keys", schema: listOf(ApiKey).meta({ id: "ApiKeyList" }) },
    handler: ({ core, auth, query }) => listApiKeys(core, auth, query),
  }),
  defineRoute({
    operationId: "mintApiKey",
    method: "post",
    path: "/v1/auth/keys",
    summary: "Mint an API key",
    description: "The response carries the new key in `api_key`, shown once.",
    tags,
    auth: "api_key",
    idempotencyRefused: "its answer carries the new key, shown once, which the service keeps only as a hash",
    body: MintKeyBody,
    bodyRequired: false,
    response: { status: 201, description: "The new key", schema: MintedKey },
    handler: ({ core, auth, body }) => mintApiKey(core.db, auth.accountId, body.name),
  }),
  defineRoute({
    operationId: "revokeApiKey",
    method: "delete",
    path: "/v1/auth/keys/{key_id}",
    summary: "Revoke an API key",
    description: "Takes effect at once. The key authenticating the request cannot revoke itself (409 `cannot_revoke_current_key`).",
    tags,
    auth: "api_key",
    params: z.object({ key_id: z.string() }),
    response: { status: 200, description: "The key is revoked", schema: RevokedKey },
    errors: [409],
    handler: ({ core, auth, params }) => revokeApiKey(core, auth, params.key_id),
  }),
  defineRoute({
    operationId: "listAgentTokens",
    method: "get",
    path: "/v1/auth/agent-tokens",
    summary: "List agent tokens",
    description:
      "The account's live agent tokens (`at_...`, the no-signup credential of the /v1/x402 routes, the sandbox and /mcp), newest first, with who minted each: " +
      "a wallet's top-up, an API key, or another agent token. Tokens themselves are never shown again; `prefix` and `last_four` identify them. " +
      "Takes an API key or an agent token of the account.",
    tags,
    auth: "api_key_or_agent_token",
    query: Pagination,
    response: { status: 200, description: "A page of agent tokens", schema: listOf(AgentToken).meta({ id: "AgentTokenList" }) },
    handler: ({ core, auth, query }) => listAgentTokens(core, actorOf(auth), query),
  }),
  defineRoute({
    operationId: "mintAgentToken",
    method: "post",
    path: "/v1/auth/agent-tokens",
    summary: "Mint an agent token",
    description:
      "Mints an agent token for the account, minted by the credential of the request (an API key or an agent token). The response carries the token in `agent_token`, shown once. " +
      "The only way an API key gets one: a top-up paid with an API key returns none.",
    tags,
    auth: "api_key_or_agent_token",
    idempotencyRefused: "its answer carries the new token, shown once, which the service keeps only as a hash",
    body: MintAgentTokenBody,
    bodyRequired: false,
    response: { status: 201, description: "The new token", schema: MintedAgentToken },
    handler: ({ core, auth, body }) => {
      const actor = actorOf(auth);
      return mintAgentToken(core.db, actor.accountId, { kind: actor.kind, id: actor.id }, body.name);
    },
  }),
  defineRoute({
    operationId: "revokeAgentToken",
    method: "delete",
    path: "/v1/auth/agent-tokens/{token_id}",
    summary: "Revoke an agent token",
    description:
      "Takes effect at once, on every process: requests with it answer 401, and the sockets (softphone) and waits (/mcp wait_for_event) it opened end within a second " +
      "(sockets close with code 4401). The agent token authenticating the request cannot revoke itself (409 `cannot_revoke_current_key`): rotate it instead.",
    tags,
    auth: "api_key_or_agent_token",
    params: z.object({ token_id: z.string() }),
    response: { status: 200, description: "The token is revoked", schema: RevokedAgentToken },
    errors: [409],
    handler: ({ core, auth, params }) => revokeAgentToken(core, actorOf(auth), params.token_id),
  }),
  defineRoute({
    operationId: "rotateAgentToken",
    method: "post",
    path: "/v1/auth/agent-tokens/{token_id}/rotate",
    summary: "Rotate an agent token",
    description:
      "Mints a new token (same name, minted by the credential of the request) and revokes the old one, in one step: the new one is in `agent_token`, shown once. " +
      "An agent token may rotate itself; what the old one opened ends as on a revoke.",
    tags,
    auth: "api_key_or_agent_token",
    idempotencyRefused: "its answer carries the new token, shown once, which the service keeps only as a hash",
    params: z.object({ token_id: z.string() }),
    response: { status: 201, description: "The new token; the old one is revoked", schema: MintedAgentToken },
    handler: ({ core, auth, params }) => rotateAgentToken(core, actorOf(auth), params.token_id),
  }),
];
