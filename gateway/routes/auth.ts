import { z } from "zod";
import { listApiKeys, mintApiKey, revokeApiKey } from "../../core/auth/api-keys.js";
import { requestOtp, verifyOtp } from "../../core/auth/otp.js";
import { ApiKey, MintedKey, MintKeyBody, OtpRequestBody, OtpRequestResult, RevokedKey, VerifyBody, VerifyResult } from "../../core/auth/schemas.js";
import { AppError } from "../../core/errors.js";
import { listOf, Pagination } from "../../core/schemas/common.js";
import { defineRoute } from "../http/route.js";

const tags = ["Auth"];

const agentIdDisabled = () =>
  new AppError("not_found", "AgentID sign-in is not enabled on this server. Sign in with an e-mail code: POST /v1/auth/otp.");

export const authRoutes = [
  defineRoute({
    operationId: "requestOtp",
    method: "post",
    path: "/v1/auth/otp",
    summary: "E-mail a sign-in code",
    description: "Sends a 6-digit code, valid for 10 minutes and once. The answer is the same for known and unknown addresses. Limits: 3 per address and 5 per IP address per 10 minutes.",
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
    description: "Creates the account on first sign-in. The `api_key` is shown once. Limit: 5 attempts per address per 10 minutes.",
    tags,
    auth: "none",
    body: VerifyBody,
    response: { status: 200, description: "Signed in", schema: VerifyResult },
    errors: [400, 429],
    handler: ({ core, body }) => verifyOtp(core, body),
  }),
  defineRoute({
    operationId: "startAgentIdSignIn",
    method: "post",
    path: "/v1/auth/agentid/start",
    summary: "Start an AgentID sign-in",
    description: "Answers 404 while AgentID is not configured on this server; use OTP sign-in instead.",
    tags,
    auth: "none",
    body: z.strictObject({ login_hint: z.string().max(254).optional() }).meta({ id: "AgentIdStartRequest" }),
    bodyRequired: false,
    response: { status: 200, description: "The sign-in session", schema: z.object({ authorize_url: z.string(), session_id: z.string() }) },
    errors: [404],
    handler: async () => {
      throw agentIdDisabled();
    },
  }),
  defineRoute({
    operationId: "pollAgentIdSignIn",
    method: "post",
    path: "/v1/auth/agentid/poll",
    summary: "Poll an AgentID sign-in",
    description: "Answers 404 while AgentID is not configured on this server.",
    tags,
    auth: "none",
    body: z.strictObject({ session_id: z.string().min(1).max(100) }).meta({ id: "AgentIdPollRequest" }),
    response: { status: 200, description: "The sign-in state", schema: z.object({ status: z.string(), api_key: z.string().optional() }) },
    errors: [404],
    handler: async () => {
      throw agentIdDisabled();
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
];
