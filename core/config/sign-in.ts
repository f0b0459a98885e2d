import { z } from "zod";
import { ConfigError, required } from "./errors.js";
import { isLoopbackHost, UNPARSABLE_URL } from "./values.js";

/** An OpenID Connect issuer: https, or http on loopback only (tests and local development). */
const issuerUrl = z
  .url({ protocol: /^https?$/ })
  .refine((v) => {
    const url = new URL(v);
    return url.protocol === "https:" || isLoopbackHost(url.hostname);
  }, "must be https:// (http:// is accepted only on loopback)")
  .refine((v) => !new URL(v).search && !new URL(v).hash, "an issuer has no query or fragment");

/** The settings of sign-in (e-mail codes, AgentID, OAuth for MCP clients), each with its documentation (docs/configuration.md is generated from them). */
export const signInSettings = z
  .object({
    SMTP_URL: z
      .string()
      .regex(/^smtps?:\/\//, "expected an smtp:// or smtps:// URL")
      .refine((v) => URL.canParse(v), UNPARSABLE_URL)
      .optional()
      .meta({ description: "`smtp://` or `smtps://` URL of the mail server for sign-in codes. Unset: codes go to the log (development only)." }),
    MAIL_FROM: z.string().min(3).default("agentline <no-reply@agentline.localhost>").meta({ description: "Sender of sign-in mail." }),
    AGENTID_ISSUER: issuerUrl.optional().meta({
      description:
        "OpenID Connect issuer for AgentID sign-in (`https://auth.agentid.com`); `https://` only, `http://` on loopback only. Unset: AgentID is off and its start answers `404`. Register `BASE_URL` + `/v1/auth/agentid/callback` as the redirect URI.",
    }),
    AGENTID_CLIENT_ID: z.string().min(1).max(255).optional().meta({ description: "This service's client at the issuer; required with `AGENTID_ISSUER`." }),
    AGENTID_CLIENT_SECRET: z.string().min(1).max(1024).optional().meta({
      secret: true,
      description: "The client's secret at the issuer. Unset: a public client, authenticated by PKCE alone.",
    }),
    AGENTID_SESSION_TTL_S: z.coerce.number().int().min(60).max(3600).default(600).meta({
      description: "How long an AgentID sign-in session lives, from start to the last poll.",
    }),
    OAUTH_ACCESS_TOKEN_TTL_S: z.coerce.number().int().min(1).max(3600).default(3600).meta({
      description: "How long an OAuth access token for `/mcp` lives; the client refreshes it.",
    }),
  })
  .meta({
    title: "Sign-in",
    description: "Sign-in codes by e-mail, AgentID sign-in (OpenID Connect) and OAuth for remote MCP clients.",
  });

export type SignInSettings = z.output<typeof signInSettings>;

/** The sign-in part of Config; AgentID's issuer and client id go together. */
export function signInConfig(e: SignInSettings) {
  if (e.AGENTID_ISSUER && !e.AGENTID_CLIENT_ID) throw required("AGENTID_CLIENT_ID", "with AGENTID_ISSUER");
  for (const name of ["AGENTID_CLIENT_ID", "AGENTID_CLIENT_SECRET"] as const) {
    if (e[name] && !e.AGENTID_ISSUER) throw new ConfigError(`Invalid configuration: ${name} is set but AGENTID_ISSUER is not (set both, or neither)`);
  }
  return {
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    /** AgentID sign-in; undefined when AGENTID_ISSUER is unset (then it answers 404). */
    agentId: e.AGENTID_ISSUER
      ? {
          /** The issuer identifier, exactly as configured (its discovery document must name the same). */
          issuer: e.AGENTID_ISSUER,
          clientId: e.AGENTID_CLIENT_ID!,
          clientSecret: e.AGENTID_CLIENT_SECRET,
          sessionTtlS: e.AGENTID_SESSION_TTL_S,
        }
      : undefined,
    oauthAccessTokenTtlS: e.OAUTH_ACCESS_TOKEN_TTL_S,
  };
}

/** Where AgentID sign-in goes and who this service is to it. */
export type AgentIdSettings = NonNullable<ReturnType<typeof signInConfig>["agentId"]>;
