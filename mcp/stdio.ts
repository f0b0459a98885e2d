import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Core } from "../core/context.js";
import { createMcpServer, type McpPrincipal } from "./server.js";

/**
 * Serves MCP over this process's stdin and stdout (a local install: the MCP client starts the
 * process). stdout carries protocol messages only, so everything else must log to stderr.
 * Resolves when the client closes stdin.
 */
export async function serveMcpOverStdio(core: Core, principal: McpPrincipal): Promise<void> {
  // This process serves no HTTP: links in events reach something only through BASE_URL (a
  // service on the same database); without it they are null (see publicUrl).
  core.baseUrl = core.config.baseUrl ?? "";
  const server = createMcpServer(core, principal);
  const ended = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  await server.connect(new StdioServerTransport());
  await ended;
  await server.close();
}
