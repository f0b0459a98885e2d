import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Core } from "../core/context.js";
import { createMcpServer, type McpPrincipal } from "./server.js";

/**
 * Serves one MCP POST, statelessly: a new server and transport per request, so any gateway
 * process can answer any request. Answers are plain JSON (no stream): a tool result is one
 * message, and a long wait_for_event is one held request. Closing the connection aborts the call.
 */
export async function serveMcpRequest(core: Core, principal: McpPrincipal, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const server = createMcpServer(core, principal);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
