import { z } from "zod";
import type { Limits } from "../core/config.js";
import type { LimitName } from "../core/errors.js";
import { LIMITS } from "../core/limits.js";
import { mcpToolsEntry, type PaidMcpTool } from "./payment-documents.js";

const Limit = z.object({
  max: z.number().int().meta({ description: "The ceiling, as this deployment sets it" }),
  counts: z.string().meta({ description: "What is counted" }),
  beyond: z.string().meta({ description: "What a client meets beyond it" }),
  setting: z.string().meta({ description: "The server setting that sets it" }),
});

export const ServiceDocument = z
  .object({
    name: z.string(),
    version: z.string(),
    description: z.string(),
    base_url: z.string(),
    links: z.object({
      docs: z.string(),
      openapi: z.string(),
      mcp: z.string(),
      payments: z.string(),
      health: z.string(),
      oauth_protected_resource: z.string(),
      oauth_authorization_server: z.string(),
    }),
    auth: z.object({
      methods: z.array(z.object({ type: z.string(), description: z.string() }).catchall(z.unknown())),
    }),
    events: z.object({
      transports: z.array(z.object({ type: z.string(), description: z.string() }).catchall(z.unknown())),
    }),
    carrier: z.string(),
    limits: z
      .object({ account_sockets: Limit, account_waits: Limit, account_agents: Limit, account_requests: Limit, ip_connections: Limit } satisfies Record<
        LimitName,
        typeof Limit
      >)
      .meta({ description: "What one account (or client address) may hold at once; a refusal names the limit (429 limit_reached, `limit` and `max`)" }),
  })
  .meta({ id: "ServiceDocument" });
export type ServiceDocument = z.infer<typeof ServiceDocument>;

/** What this deployment offers; the document only lists what is switched on. */
export interface ServiceFeatures {
  version: string;
  carrier: string;
  agentIdEnabled: boolean;
  /** The no-signup route (x402, MPP, agent_token) is offered. */
  payments: boolean;
  /** Event transports that are live, in order of preference. */
  transports: Array<"relay" | "webhook" | "mailbox">;
  limits: Limits;
  /** The paid MCP tools of /mcp/x402 (with payments on). */
  paidMcpTools?: PaidMcpTool[];
}

const TRANSPORTS = {
  relay: (base: string) => ({
    type: "relay",
    description: "A WebSocket; events are durable until acknowledged. Preferred: no public URL needed.",
    url: base.replace(/^http/, "ws") + "/v1/events/ws?agent_id={agent_id}&runtime={runtime}",
    auth: "Authorization: Bearer sk_... on the upgrade, or ?ticket= from POST /v1/events/ws/ticket (browsers, built-in WebSockets)",
    ticket: base + "/v1/events/ws/ticket",
  }),
  webhook: (base: string) => ({
    type: "webhook",
    description: "Signed HTTPS POSTs to your URL (HMAC-SHA256 and Standard Webhooks headers).",
    configure: base + "/v1/webhooks",
  }),
  mailbox: (base: string) => ({
    type: "mailbox",
    description: "Polling: GET consumes pending events, /peek previews them. Unsuitable for live caller turns.",
    url: base + "/v1/events",
  }),
};

/** `/.well-known/service.json`: where everything is, how to sign in, how events arrive. */
export function buildServiceDocument(baseUrl: string, features: ServiceFeatures): ServiceDocument {
  const methods: ServiceDocument["auth"]["methods"] = [
    {
      type: "api_key",
      description: "Send 'Authorization: Bearer sk_...' on every authenticated request.",
      header: "Authorization",
      keys: baseUrl + "/v1/auth/keys",
    },
    {
      type: "email_otp",
      description: "POST an e-mail address to request a 6-digit code, then POST the code to get an API key.",
      request: baseUrl + "/v1/auth/otp",
      verify: baseUrl + "/v1/auth/verify",
    },
  ];
  if (features.payments) {
    methods.push(
      {
        type: "agent_token",
        description: "No signup: pay the top-up with x402 or MPP and present the returned 'Authorization: Bearer at_...' on the /v1/x402 routes.",
        obtain: baseUrl + "/v1/billing/topup/x402/pay",
      },
      {
        type: "x402",
        description: "Pay per request on the /v1/x402 routes with an x402 v2 PAYMENT-SIGNATURE, or per tool call on /mcp/x402 (_meta 'x402/payment').",
        discovery: baseUrl + "/.well-known/x402",
        ...(features.paidMcpTools ? { mcp: mcpToolsEntry(baseUrl, features.paidMcpTools) } : {}),
      },
      {
        type: "mpp",
        description:
          "Pay per request on the /v1/x402 routes with MPP (Authorization: Payment), or per tool call on /mcp/x402 (_meta 'org.paymentauth/credential').",
        discovery: baseUrl + "/.well-known/agent-payments.json",
      },
    );
  }
  if (features.agentIdEnabled) {
    methods.push({ type: "agentid", description: "OpenID Connect sign-in for AI agents, polled.", start: baseUrl + "/v1/auth/agentid/start" });
  }
  methods.push({
    type: "oauth",
    description:
      "For remote MCP clients (Claude, ChatGPT, VS Code, Cursor), on /mcp: OAuth 2.1, this service being the authorization server. Add the /mcp URL as a connector; " +
      "the person signs in with an e-mail code and allows the client on a consent page.",
    protected_resource_metadata: baseUrl + "/.well-known/oauth-protected-resource/mcp",
    authorization_server_metadata: baseUrl + "/.well-known/oauth-authorization-server",
    connections: baseUrl + "/v1/auth/connections",
  });
  return {
    name: "agentline",
    version: features.version,
    description: "A phone line for software agents.",
    base_url: baseUrl,
    links: {
      docs: baseUrl + "/docs",
      openapi: baseUrl + "/openapi.json",
      mcp: baseUrl + "/mcp",
      payments: baseUrl + "/.well-known/agent-payments.json",
      health: baseUrl + "/health",
      oauth_protected_resource: baseUrl + "/.well-known/oauth-protected-resource/mcp",
      oauth_authorization_server: baseUrl + "/.well-known/oauth-authorization-server",
    },
    auth: { methods },
    events: { transports: features.transports.map((t) => TRANSPORTS[t](baseUrl)) },
    carrier: features.carrier,
    limits: limitsDocument(features.limits),
  };
}

/** Each limit with its value in this deployment and what happens beyond it. */
function limitsDocument(limits: Limits): ServiceDocument["limits"] {
  const entries = Object.entries(LIMITS).map(([name, limit]) => [
    name,
    { max: limits[limit.setting], counts: limit.counts, beyond: limit.beyond, setting: limit.env },
  ]);
  return Object.fromEntries(entries) as ServiceDocument["limits"];
}
