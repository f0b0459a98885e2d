import { z } from "zod";
import { serveMcpRequest } from "../../mcp/http.js";
import { defineRoute } from "../http/route.js";

/** One JSON-RPC 2.0 message; the MCP SDK checks the rest. */
const JsonRpcMessage = z.looseObject({ jsonrpc: z.literal("2.0") }).meta({ id: "JsonRpcMessage", description: "A JSON-RPC 2.0 message (MCP)" });

/** The MCP server over Streamable HTTP (stateless): every operation as a tool for LLM agents. */
export const mcpRoutes = [
  defineRoute({
    operationId: "mcp",
    method: "post",
    path: "/mcp",
    summary: "MCP server (Streamable HTTP)",
    description:
      "The Model Context Protocol endpoint: tools/list and tools/call over Streamable HTTP, stateless (no session id; GET and DELETE are 405). " +
      "Authorize with an API key or a no-signup agent_token as a Bearer token. Send `Accept: application/json, text/event-stream`. " +
      "A tool's failure is a result with isError true; the transport's own errors (406, 415) are JSON-RPC errors.",
    tags: ["MCP"],
    auth: "api_key_or_agent_token",
    body: z.union([JsonRpcMessage, z.array(JsonRpcMessage).min(1)]),
    protocolBody: true,
    response: { status: 200, description: "The JSON-RPC response", schema: JsonRpcMessage },
    otherResponses: [{ status: 202, description: "Accepted: the message was a notification" }],
    handler: async ({ core, auth, req, res, body }) => {
      await serveMcpRequest(core, { accountId: auth.accountId }, req, res, body);
    },
  }),
];
