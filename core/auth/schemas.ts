import { z } from "zod";
import { Timestamp } from "../schemas/common.js";

export const Email = z.email().max(254).meta({ description: "E-mail address", example: "ada@example.com" });

export const OtpRequestBody = z.strictObject({ email: Email }).meta({ id: "OtpRequest" });

export const OtpRequestResult = z
  .object({
    status: z.enum(["sent", "logged"]).meta({
      description: "`sent`: the code was e-mailed. `logged`: this server has no mail server (SMTP_URL), so the code was written to its log (development only).",
    }),
    email: z.string(),
    expires_in_seconds: z.number().int(),
    detail: z.string().optional().meta({ description: "With `logged`: where the code went." }),
  })
  .meta({ id: "OtpRequestResult", description: "The same answer whether or not the address has an account." });

export const VerifyBody = z
  .strictObject({
    email: Email,
    otp: z
      .string()
      .regex(/^\d{6}$/, "must be the 6-digit code from the e-mail")
      .meta({ example: "042917" }),
  })
  .meta({ id: "VerifyRequest" });

export const VerifyResult = z
  .object({
    api_key: z.string().meta({ description: "The new API key. Shown once: store it now." }),
    key_id: z.string(),
    account_id: z.string(),
    account_created: z.boolean().meta({ description: "True when this sign-in created the account." }),
  })
  .meta({ id: "VerifyResult" });

export const ApiKey = z
  .object({
    key_id: z.string(),
    name: z.string().nullable(),
    prefix: z.string().meta({ description: "The first characters of the key, to recognise it." }),
    last_four: z.string(),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    current: z.boolean().meta({ description: "True for the key that authenticated this request." }),
  })
  .meta({ id: "ApiKey" });
export type ApiKey = z.infer<typeof ApiKey>;

export const MintKeyBody = z
  .strictObject({ name: z.string().trim().min(1).max(100).optional().meta({ description: "A label for the key" }) })
  .meta({ id: "MintKeyRequest" });

export const MintedKey = ApiKey.extend({
  api_key: z.string().meta({ description: "The key itself. Shown once: store it now." }),
}).meta({ id: "MintedKey" });

export const RevokedKey = z.object({ key_id: z.string(), revoked: z.literal(true), revoked_at: Timestamp }).meta({ id: "RevokedKey" });

export const AgentTokenMinter = z
  .object({
    kind: z.enum(["wallet", "api_key", "agent_token"]).meta({
      description:
        "`wallet`: a payment from the wallet (a top-up) minted it. `api_key`: an API key, by POST /v1/auth/agent-tokens. `agent_token`: another agent token of the account (a mint or a rotation).",
    }),
    id: z
      .string()
      .nullable()
      .meta({ description: "The wallet address, key_id or token_id. Null for a token issued by a top-up with an API key before tokens were listed." }),
  })
  .meta({ id: "AgentTokenMinter", description: "Who minted the token." });

export const AgentToken = z
  .object({
    token_id: z.string(),
    name: z.string().nullable(),
    prefix: z.string().meta({ description: "The first characters of the token, to recognise it." }),
    last_four: z.string().nullable().meta({ description: "Null only for a token issued before tokens were listed, until its next use." }),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable(),
    minted_by: AgentTokenMinter,
    current: z.boolean().meta({ description: "True for the agent token that authenticated this request." }),
  })
  .meta({ id: "AgentToken" });
export type AgentToken = z.infer<typeof AgentToken>;

export const MintAgentTokenBody = z
  .strictObject({ name: z.string().trim().min(1).max(100).optional().meta({ description: "A label for the token" }) })
  .meta({ id: "MintAgentTokenRequest" });

export const MintedAgentToken = AgentToken.extend({
  agent_token: z.string().meta({ description: "The token itself (`at_...`). Shown once: store it now." }),
}).meta({ id: "MintedAgentToken" });

export const RevokedAgentToken = z.object({ token_id: z.string(), revoked: z.literal(true), revoked_at: Timestamp }).meta({ id: "RevokedAgentToken" });

export const AgentIdStartBody = z
  .strictObject({
    // An empty hint is no hint (as before AgentID existed, when `""` met the 404): a client
    // that always sends the field must not get a 422 where the contract promises 404 or 200.
    login_hint: z
      .string()
      .trim()
      .max(254)
      .optional()
      .meta({ description: "Passed to the identity provider as OpenID Connect's `login_hint` (for AgentID, the agent's identity). Empty means no hint." }),
  })
  .meta({ id: "AgentIdStartRequest" });

export const AgentIdSession = z
  .object({
    authorize_url: z.url().meta({ description: "Open this in a browser (or have the agent's runtime open it) to sign in at the identity provider." }),
    session_id: z.string().meta({ description: "A secret: poll POST /v1/auth/agentid/poll with it. Never part of authorize_url." }),
    expires_in: z.number().int().meta({ description: "Seconds the session lives." }),
    interval: z.number().int().meta({ description: "Seconds to wait between polls (RFC 8628)." }),
  })
  .meta({ id: "AgentIdSession" });

export const AgentIdPollBody = z
  .strictObject({ session_id: z.string().min(1).max(100).meta({ description: "From POST /v1/auth/agentid/start." }) })
  .meta({ id: "AgentIdPollRequest" });

/** The identity provider's redirect: an authorization response (RFC 6749 §4.1.2, RFC 9207's `iss`). */
export const AgentIdCallbackQuery = z.looseObject({
  code: z.string().max(4096).optional(),
  state: z.string().max(512).optional(),
  iss: z.string().max(2048).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
});
