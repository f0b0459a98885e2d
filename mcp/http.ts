import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

/**
 * Serves one MCP POST with a server made for it (stateless), so any gateway process can answer
 * any request: /mcp's (mcp/server.ts) or /mcp/x402's (mcp/paid/server.ts). Answers are plain
 * JSON (no stream): a tool result is one message, and a long wait_for_event is one held request.
 * Closing the connection aborts the call.
 */
export async function serveStateless(server: Server, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
