import { eq } from "drizzle-orm";
import { z } from "zod";
import { loadCall } from "../../core/calls/call-records.js";
import { TERMINAL_STATUSES } from "../../core/calls/schemas.js";
import type { Core } from "../../core/context.js";
import { recordings } from "../../core/db/schema/recordings.js";
import { AppError } from "../../core/errors.js";
import { peekEvents } from "../../core/events/events.js";
import { deliveryTarget } from "../../core/events/routing.js";
import { EVENT_TYPES, EventBatch, PeekEventsQuery, WaitForEventsInput } from "../../core/events/schemas.js";
import { waitForEvents } from "../../core/events/wait.js";
import { parseClientJson } from "../../core/schemas/json-limits.js";
import { revokedCredential } from "../errors.js";
import { McpEvent, mcpEvents } from "../event-view.js";
import { FILLER_NOTE } from "../filler.js";
import { defineTool } from "../tool.js";

/** What a cursor remembers: the filters of the wait that returned it. */
const CursorFilters = z.strictObject({
  agent_id: z.string().optional(),
  call_id: z.string().optional(),
  event_types: z.array(z.enum(EVENT_TYPES)).optional(),
});
type CursorFilters = z.infer<typeof CursorFilters>;

const encodeCursor = (filters: CursorFilters) => Buffer.from(JSON.stringify(filters)).toString("base64url");

function decodeCursor(cursor: string): CursorFilters {
  try {
    return CursorFilters.parse(parseClientJson(Buffer.from(cursor, "base64url").toString("utf8")));
  } catch {
    throw new AppError("validation_error", "The cursor is not one wait_for_event returned.", {
      errors: [{ field: "cursor", message: "is not a cursor from wait_for_event" }],
    });
  }
}

/** Why a wait found nothing, when the answer is that the agent's events go somewhere else. */
async function routedElsewhere(core: Core, accountId: string, filters: CursorFilters): Promise<string | undefined> {
  const agentId = filters.agent_id ?? (filters.call_id ? (await loadCall(core.db, accountId, filters.call_id)).agentId : undefined);
  if (!agentId) return undefined;
  const target = await deliveryTarget(core.db, agentId, core.now());
  if (target.route === "webhook")
    return `Agent ${agentId} has a webhook, so its events are posted there, not kept for wait_for_event. delete_webhook to receive them here.`;
  if (target.route === "relay") return `Agent ${agentId} has a relay WebSocket open, so its events go to that socket, not to wait_for_event.`;
  return undefined;
}

/**
 * The status of a call that has ended and will send nothing more, or undefined while something can
 * still come: a live call, or an answered recorded call whose call.recording.ready is on its way.
 */
async function endedForGood(core: Core, accountId: string, callId: string): Promise<string | undefined> {
  const call = await loadCall(core.db, accountId, callId);
  if (!TERMINAL_STATUSES.has(call.status)) return undefined;
  if (call.record && call.answeredAt) {
    const [kept] = await core.db.select({ id: recordings.recordingId }).from(recordings).where(eq(recordings.callId, callId));
    if (!kept) return undefined;
  }
  return call.status;
}

export const eventTools = [
  defineTool({
    name: "wait_for_event",
    title: "Wait for the next events",
    description:
      "Waits up to timeout_seconds for pending events (call.utterance, call.completed, sms.received, ...) and returns them, oldest first, " +
      "as soon as there are any. Returned events are consumed: each is returned once. Narrow it with agent_id, call_id and event_types; " +
      "call it again with the returned cursor to keep waiting with the same filters. About a call that has ended, it answers at once (a hint " +
      "says nothing more will come). Answer each call.utterance (payload.text: what the other party said) with push_context at once. " +
      `${FILLER_NOTE} Events carry no conversation history: get_transcript has it.`,
    input: [WaitForEventsInput],
    output: z.object({
      events: z.array(McpEvent),
      has_more: z.boolean().meta({ description: "More matching events are pending: call again at once" }),
      timed_out: z.boolean().meta({ description: "Nothing arrived within timeout_seconds" }),
      cursor: z.string().meta({ description: "Pass it to wait_for_event to wait again with the same filters" }),
      hint: z.string().optional().meta({ description: "Why nothing (more) can arrive here, when that is the case" }),
    }),
    hints: {},
    run: async ({ core, accountId, signal, revoked }, { cursor, timeout_seconds, limit, ...given }) => {
      const remembered = cursor ? decodeCursor(cursor) : {};
      const filters: CursorFilters = {
        agent_id: given.agent_id ?? remembered.agent_id,
        call_id: given.call_id ?? remembered.call_id,
        event_types: given.event_types ?? remembered.event_types,
      };
      // A wait about a call that is over only takes what is pending: nothing more can come for it.
      const ended = filters.call_id ? await endedForGood(core, accountId, filters.call_id) : undefined;
      const batch = await waitForEvents(
        core,
        accountId,
        { agentId: filters.agent_id, callId: filters.call_id, eventTypes: filters.event_types },
        { limit, timeoutMs: ended ? 0 : timeout_seconds * 1000, signal },
      );
      // Ended by a revoke with nothing taken: the answer says so (events a claim already took are returned, not lost).
      if (batch.timed_out && revoked.aborted) throw revokedCredential();
      const hint = !batch.timed_out
        ? undefined
        : ended
          ? `Call ${filters.call_id} has ended (${ended}) and nothing for it is pending: nothing more will arrive for it. ` +
            "get_transcript shows what was said, get_call how it ended and what it cost."
          : core.stopping.aborted
            ? "The service is restarting or shutting down, so this wait ended early: call wait_for_event again with the cursor in a moment."
            : await routedElsewhere(core, accountId, filters);
      const events = await mcpEvents(core, accountId, batch.data);
      return { events, has_more: batch.has_more, timed_out: batch.timed_out, cursor: encodeCursor(filters), ...(hint ? { hint } : {}) };
    },
  }),
  defineTool({
    name: "peek_events",
    title: "Look at pending events",
    description: "Lists pending events, oldest first, without consuming them (wait_for_event consumes). Use it to see what is waiting.",
    input: [PeekEventsQuery],
    output: EventBatch.extend({ data: z.array(McpEvent) }),
    hints: { readOnly: true },
    run: async ({ core, accountId }, args) => {
      const batch = await peekEvents(core, accountId, args);
      return { ...batch, data: await mcpEvents(core, accountId, batch.data) };
    },
  }),
];
