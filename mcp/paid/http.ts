import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Core } from "../../core/context.js";
import { createPaidMcpServer, type PaidCaller } from "./server.js";

/** Serves one /mcp/x402 POST, statelessly, as mcp/http.ts serves /mcp. */
export async function servePaidMcpRequest(core: Core, caller: PaidCaller | null, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const server = createPaidMcpServer(core, caller);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
