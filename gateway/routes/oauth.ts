import { z } from "zod";
import type { Core } from "../../core/context.js";
import { disconnect, listConnections } from "../../core/oauth/connections.js";
import { Connection, ConnectionIdParams, Disconnected } from "../../core/oauth/schemas.js";
import { ALL_SCOPES } from "../../core/oauth/scopes.js";
import { listOf, Pagination } from "../../core/schemas/common.js";
import { defineRoute, Reply } from "../http/route.js";
import { mcpResource, PROTECTED_RESOURCE_PATH } from "../oauth/endpoints.js";

const ProtectedResourceMetadata = z
  .object({
    resource: z.string().meta({ description: "The MCP endpoint, <BASE_URL>/mcp: the `resource` (RFC 8707) every token is minted for" }),
    authorization_servers: z.array(z.string()).meta({ description: "This service's own issuer" }),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
    resource_name: z.string(),
    resource_documentation: z.string(),
  })
  .meta({ id: "ProtectedResourceMetadata", description: "OAuth 2.0 Protected Resource Metadata (RFC 9728) of /mcp" });

/** RFC 9728's document: where MCP clients learn which authorization server to sign in with. */
function protectedResourceMetadata(core: Core) {
  // Browser-based MCP clients read it from their own origin.
  return new Reply(
    200,
    {
      resource: mcpResource(core),
      authorization_servers: [core.baseUrl],
      scopes_supported: [...ALL_SCOPES],
      bearer_methods_supported: ["header"],
      resource_name: "agentline MCP server",
      resource_documentation: `${core.baseUrl}/docs`,
    },
    { "Access-Control-Allow-Origin": "*" },
  );
}

const tags = ["Auth"];

/** OAuth for remote MCP clients: the resource's metadata, and the account's connected clients. */
export const oauthRoutes = [
  defineRoute({
    operationId: "getProtectedResourceMetadata",
    method: "get",
    path: PROTECTED_RESOURCE_PATH,
    summary: "Protected resource metadata of /mcp",
    description:
      "RFC 9728, at the path named by /mcp's 401 (`resource_metadata`): /mcp's resource identifier, its authorization server (this service) and scopes.",
    tags: ["Discovery"],
    auth: "none",
    response: { status: 200, description: "The metadata", schema: ProtectedResourceMetadata },
    handler: async ({ core }) => protectedResourceMetadata(core),
  }),
  defineRoute({
    operationId: "getProtectedResourceMetadataRoot",
    method: "get",
    path: "/.well-known/oauth-protected-resource",
    summary: "Protected resource metadata (root form)",
    description: "The same document as /.well-known/oauth-protected-resource/mcp, for clients that look at the root.",
    tags: ["Discovery"],
    auth: "none",
    response: { status: 200, description: "The metadata", schema: ProtectedResourceMetadata },
    handler: async ({ core }) => protectedResourceMetadata(core),
  }),
  defineRoute({
    operationId: "listConnections",
    method: "get",
    path: "/v1/auth/connections",
    summary: "List connected MCP clients",
    description: "The clients (Claude, ChatGPT, VS Code, Cursor, ...) the account allowed with OAuth, newest first: what each may do, and for which agent.",
    tags,
    auth: "api_key",
    query: Pagination,
    response: { status: 200, description: "A page of connections", schema: listOf(Connection).meta({ id: "ConnectionList" }) },
    handler: ({ core, auth, query }) => listConnections(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "disconnect",
    method: "delete",
    path: "/v1/auth/connections/{connection_id}",
    summary: "Disconnect an MCP client",
    description: "Its access and refresh tokens stop working at once, on every process; the client must sign in again (and be allowed again) to reconnect.",
    tags,
    auth: "api_key",
    params: ConnectionIdParams,
    response: { status: 200, description: "Disconnected", schema: Disconnected },
    handler: ({ core, auth, params }) => disconnect(core, auth.accountId, params.connection_id),
  }),
];
