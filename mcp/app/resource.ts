import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type McpUiAppResourceConfig, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, ListResourcesRequestSchema, McpError, ReadResourceRequestSchema, type Resource } from "@modelcontextprotocol/sdk/types.js";
import { projectRoot } from "../../core/db/paths.js";

/** The live call view (DESIGN §9c): one HTML document, status, transcript and hang-up, talking only to its host. */
export const CALL_VIEW_URI = "ui://agentline/call.html";

/** Where `npm run build` leaves the view (scripts/build-mcp-app.mjs bundles mcp/app/view/ into it). */
export const CALL_VIEW_FILE = join(projectRoot, "dist", "mcp-app", "call.html");

// ext-apps' McpUiResourceMeta, reached through a type its server entry exports: its main entry's
// `export * from "./types"` has no extension, which NodeNext resolution does not follow.
type McpUiResourceMeta = NonNullable<NonNullable<McpUiAppResourceConfig["_meta"]>["ui"]>;

/** MCP's "resource not found" (the spec's -32002; the SDK 1.32 has no name for it). */
const RESOURCE_NOT_FOUND = -32002;

/**
 * No outside origin at all: empty connect and resource domains, so the host's sandbox lets the
 * view fetch nothing and load nothing. Its script and style are inline, and it reaches the
 * service only through the host (tools/call).
 */
const UI_META: McpUiResourceMeta = { csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }, prefersBorder: true };

const LISTING: Resource = {
  uri: CALL_VIEW_URI,
  name: "call_view",
  title: "Live call",
  description: "A call's status and transcript as it grows, with a hang-up button (place_call, get_call and transfer_call show it).",
  mimeType: RESOURCE_MIME_TYPE,
  _meta: { ui: UI_META },
};

let html: string | undefined;

/** The built document, read once per process. */
function callViewHtml(): string {
  if (html === undefined) {
    if (!existsSync(CALL_VIEW_FILE)) {
      throw new McpError(ErrorCode.InternalError, `The call view is not built (${CALL_VIEW_FILE} is missing): run npm run build.`);
    }
    html = readFileSync(CALL_VIEW_FILE, "utf8");
  }
  return html;
}

/**
 * resources/list and resources/read for the one resource: no templates, no subscriptions, no
 * list_changed (the list never changes while the server runs).
 */
export function serveAppResources(server: Server): void {
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [LISTING] }));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const { uri } = request.params;
    if (uri !== CALL_VIEW_URI) {
      throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${JSON.stringify(uri)}; resources/list shows the one resource, ${CALL_VIEW_URI}.`, { uri });
    }
    return { contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: callViewHtml(), _meta: { ui: UI_META } }] };
  });
}
