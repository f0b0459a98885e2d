import type { Request } from "express";
import { z } from "zod";
import { authenticateAgentToken } from "../../core/auth/agent-tokens.js";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { serveStateless } from "../../mcp/http.js";
import { createPaidMcpServer, type PaidCaller } from "../../mcp/paid/server.js";
import { missingScope, steppedUpScope } from "../../mcp/scopes.js";
import { createMcpServer } from "../../mcp/server.js";
import { bearerToken } from "../http/authenticate.js";
import { actorOf, type OAuthAuth } from "../http/principal.js";
import { publicBaseUrl } from "../http/problem.js";
import { defineRoute } from "../http/route.js";
import { PROTECTED_RESOURCE_PATH } from "../oauth/endpoints.js";

/** One JSON-RPC 2.0 message; the MCP SDK checks the rest. */
const JsonRpcMessage = z.looseObject({ jsonrpc: z.literal("2.0") }).meta({ id: "JsonRpcMessage", description: "A JSON-RPC 2.0 message (MCP)" });

/** The transport's own refusals, in JSON-RPC's terms (the MCP SDK writes them). */
const JsonRpcError = z
  .object({
    jsonrpc: z.literal("2.0"),
    id: z.union([z.string(), z.number(), z.null()]).optional(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
  })
  .meta({
    id: "JsonRpcError",
    description: "A JSON-RPC 2.0 error answered by the MCP transport (an invalid JSON-RPC message, an unsupported MCP-Protocol-Version)",
  });

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * The browser-origin rule of the Streamable HTTP transport (DNS rebinding and cross-site
 * requests): a request that names an Origin must come from this service's own origin (BASE_URL,
 * or the address it was reached at when none is set) or from loopback. A request without Origin
 * is not a browser's and stays allowed: MCP clients, curl and SDKs send none.
 */
function checkOrigin(req: Request): void {
  const origin = req.get("origin");
  if (origin === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const own = new URL(publicBaseUrl(req)).origin;
  if (url && (url.origin === own || ((url.protocol === "http:" || url.protocol === "https:") && LOOPBACK_HOSTS.has(url.hostname)))) return;
  throw new AppError(
    "origin_not_allowed",
    `Origin ${JSON.stringify(origin)} may not use this MCP server: only ${own} and loopback pages may, and clients that send no Origin.`,
  );
}

/** The transport's header rules, answered as problems before the SDK sees the request. */
function checkHeaders(req: Request): void {
  const accept = req.get("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    throw new AppError(
      "not_acceptable",
      "Send 'Accept: application/json, text/event-stream': the MCP Streamable HTTP transport requires both (answers here are plain JSON).",
    );
  }
  if (!req.is("application/json")) throw new AppError("unsupported_media_type", "Send the JSON-RPC message with 'Content-Type: application/json'.");
}

/**
 * A tool call beyond the OAuth token's scopes is refused before it runs, as HTTP 403 with the
 * step-up challenge (the MCP authorization spec): the client signs in again for the scopes named.
 */
function checkScope(core: Core, auth: OAuthAuth, body: unknown): void {
  const missing = missingScope(core.config, body, auth.scopes);
  if (!missing) return;
  const scope = steppedUpScope(auth.scopes, missing);
  throw new AppError("insufficient_scope", `This tool needs the ${missing} scope, which this connection was not granted. Sign in again allowing: ${scope}.`, {
    headers: {
      "WWW-Authenticate": `Bearer realm="agentline", error="insufficient_scope", scope="${scope}", resource_metadata="${core.baseUrl}${PROTECTED_RESOURCE_PATH}"`,
    },
  });
}

/**
 * /mcp/x402 needs no credential; an agent token, if sent, names the wallet account whose balance
 * pays (as on /v1/x402). Any other credential is refused, naming the endpoint that takes it.
 */
async function paidCaller(core: Core, req: Request): Promise<PaidCaller | null> {
  const authorization = req.get("authorization");
  if (authorization === undefined) return null;
  const token = bearerToken(authorization);
  const refuse = (detail: string) =>
    new AppError("unauthorized", detail, { headers: { "WWW-Authenticate": `Bearer realm="agentline", error="invalid_token"` } });
  if (!token?.startsWith("at_")) {
    throw refuse(
      "/mcp/x402 takes no credential, or an agent_token ('Authorization: Bearer at_...'); pay each tool call in its _meta. API keys and OAuth sign-ins use /mcp.",
    );
  }
  const principal = await authenticateAgentToken(core, token);
  if (!principal) throw refuse("The agent_token is invalid or has been revoked. Send none and pay the tool call: its first paid result carries a new one.");
  return { accountId: principal.accountId, tokenId: principal.tokenId, token };
}

/** What both MCP endpoints take and answer: JSON-RPC over Streamable HTTP, as the SDK's transport does. */
const STREAMABLE_HTTP = {
  body: z.union([JsonRpcMessage, z.array(JsonRpcMessage).min(1)]),
  protocolBody: true,
  response: { status: 200, description: "The JSON-RPC response", schema: JsonRpcMessage },
  otherResponses: [
    { status: 202, description: "Accepted: the message was a notification" },
    { status: 400, description: "Malformed JSON (a problem), or a message the MCP transport refuses (a JSON-RPC error)", schema: JsonRpcError },
  ],
};

/** The MCP server over Streamable HTTP (stateless): every operation as a tool for LLM agents. */
export const mcpRoutes = [
  defineRoute({
    operationId: "mcp",
    method: "post",
    path: "/mcp",
    summary: "MCP server (Streamable HTTP)",
    description:
      "The Model Context Protocol endpoint: tools/list and tools/call over Streamable HTTP, stateless (no session id; GET and DELETE are 405). " +
      "Authorize with an API key or a no-signup agent_token as a Bearer token, or sign in with OAuth (MCP authorization): a 401 names the protected " +
      "resource metadata in WWW-Authenticate, and a tool call beyond the access token's scopes is a 403 insufficient_scope naming the scopes to ask for. " +
      "Send `Accept: application/json, text/event-stream` (else 406) and " +
      "`Content-Type: application/json`. A browser request whose Origin is neither this service's nor loopback is a 403. " +
      "A tool's failure is a result with isError true; an unknown tool is a JSON-RPC error -32602; a message the transport cannot take is a 400 " +
      "with a JSON-RPC error (application/json); the other refusals are problems.",
    tags: ["MCP"],
    auth: "mcp",
    ...STREAMABLE_HTTP,
    errors: [403, 406],
    handler: async ({ core, auth, req, res, body }) => {
      checkOrigin(req);
      checkHeaders(req);
      if (auth.kind === "oauth") checkScope(core, auth, body);
      // The credential whose revoke ends what the request holds open (a wait_for_event): an OAuth client's is its connection.
      const credentialId = auth.kind === "oauth" ? auth.connectionId : actorOf(auth).id;
      const principal = { accountId: auth.accountId, credentialId, agentId: auth.kind === "oauth" ? auth.agentId : null };
      await serveStateless(createMcpServer(core, principal), req, res, body);
    },
  }),
  defineRoute({
    operationId: "mcpX402",
    method: "post",
    path: "/mcp/x402",
    summary: "MCP server paid per tool call (x402, MPP), no signup",
    description:
      "The no-signup tools of the /v1/x402 routes and the top-up, over MCP (Streamable HTTP, stateless, the same header and Origin rules as /mcp). " +
      "No credential is needed: a tool call is paid in its params._meta, with x402 (`x402/payment`, a PaymentPayload object or its base64) or " +
      "MPP (`org.paymentauth/credential`). An unpaid call of a priced tool is a result with isError true whose structuredContent is x402's " +
      'PaymentRequired (x402Version 2, accepts, resource; the same JSON as text) and whose `_meta["org.paymentauth/payment-required"]` ' +
      'carries the MPP challenges. A paid result carries `_meta["x402/payment-response"]` or `_meta["org.paymentauth/receipt"]`; an MPP ' +
      "credential that fails verification is a JSON-RPC error -32043. Each payment is settled before the tool acts, once: a payment used again, " +
      'on any tool, is refused. The first paid result carries the wallet\'s `agent_token` (structuredContent and `_meta["agentline/agent_token"]`); ' +
      "sent as a Bearer token here, tools its balance covers run without paying, and /mcp serves the same account.",
    tags: ["MCP"],
    auth: "none",
    ...STREAMABLE_HTTP,
    errors: [401, 403, 406],
    handler: async ({ core, req, res, body }) => {
      checkOrigin(req);
      checkHeaders(req);
      await serveStateless(createPaidMcpServer(core, await paidCaller(core, req)), req, res, body);
    },
  }),
];
