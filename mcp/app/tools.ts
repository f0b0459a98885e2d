import { RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/server";
import { z } from "zod";
import { getCall, getTranscript } from "../../core/calls/read-calls.js";
import { Call, CallIdParams, Transcript } from "../../core/calls/schemas.js";
import { defineTool } from "../tool.js";
import { CALL_VIEW_URI } from "./resource.js";

const WatchQuery = z.strictObject({
  after: z.number().int().min(0).default(0).meta({ description: "How many transcript lines the view already shows: only the lines after them are returned" }),
});

/** What the view shows of a call (and all a poll carries): a small listing, a small answer. */
const WatchedCall = Call.pick({ call_id: true, status: true, direction: true, from_number: true, to_number: true, duration_seconds: true, ended_by: true });

/**
 * Tools only the live call view calls (through its host): MCP Apps hosts keep a tool whose
 * visibility is ["app"] away from the model. The view polls this one while the call is live.
 */
export const appTools = [
  defineTool({
    name: "watch_call",
    title: "Call view: new lines",
    description: "The live call view's poll (an MCP App's own tool): the call, and its transcript lines after the first `after`. Agents use wait_for_event.",
    input: [CallIdParams, WatchQuery],
    output: z.object({ call: WatchedCall, lines: Transcript, next: z.number().int() }),
    hints: { readOnly: true },
    run: async ({ core, accountId }, args) => {
      // The call first: a line said between the two reads then shows on the next poll, never
      // after a status that already says the call ended.
      const call = await getCall(core, accountId, args.call_id);
      const transcript = await getTranscript(core, accountId, args.call_id);
      return { call, lines: transcript.slice(args.after), next: Math.max(args.after, transcript.length) };
    },
  }),
];

/** The `_meta.ui` of a tool (ext-apps' McpUiToolMeta), with the older flat key that registerAppTool also writes. */
function ui(visibility?: ("model" | "app")[]) {
  return { ui: { resourceUri: CALL_VIEW_URI, ...(visibility ? { visibility } : {}) }, [RESOURCE_URI_META_KEY]: CALL_VIEW_URI };
}

/** What tools/list adds to a tool's `_meta` for hosts that render MCP Apps: which tools show the live call view. */
export const APP_TOOL_META: Readonly<Record<string, Record<string, unknown>>> = {
  place_call: ui(),
  get_call: ui(),
  transfer_call: ui(),
  watch_call: ui(["app"]),
};
