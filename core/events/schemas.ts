import { z } from "zod";
import { Pagination, Timestamp } from "../schemas/common.js";

/** Every event type (the spec's Events table). */
export const EVENT_TYPES = [
  "call.received",
  "call.utterance",
  "call.completed",
  "call.owner_task",
  "call.failed",
  "call.busy",
  "call.no-answer",
  "call.canceled",
  "sms.received",
  "sms.status",
  "webhook.test",
  "number.renewal_failed",
  "number.released",
  "call.answered_by",
  "call.recording.ready",
  "call.transfer.started",
  "call.transfer.answered",
  "call.transfer.failed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const TranscriptLine = z.object({ role: z.enum(["user", "assistant"]), text: z.string(), timestamp: Timestamp });

/** The envelope every event is delivered in; `call.utterance` adds the live-turn fields. */
export const EventEnvelope = z
  .object({
    event_id: z.string().meta({ description: "evt_...; deduplicate on it" }),
    agent_id: z.string(),
    account_id: z.string(),
    event_type: z.enum(EVENT_TYPES),
    created_at: Timestamp,
    payload: z.record(z.string(), z.unknown()).meta({ description: "Type-specific content; see docs/events.md" }),
    call_id: z.string().optional().meta({ description: "call.utterance only" }),
    turn_id: z.string().optional().meta({ description: "call.utterance only: echo it exactly when pushing context" }),
    session_key: z.string().optional().meta({ description: "call.utterance only: one key per call, for the runtime's session" }),
    conversation: z.array(TranscriptLine).optional().meta({
      description:
        "call.utterance only: the call's newest lines, this utterance last: at most 100 lines and 16 KiB of text in all (this utterance whatever its size); conversation_omitted counts the earlier ones",
    }),
    conversation_omitted: z.number().int().min(0).optional().meta({
      description: "call.utterance only: how many earlier lines of the call conversation leaves out (0: it is the whole call); read them at transcript_url",
    }),
    transcript_url: z
      .string()
      .nullable()
      .optional()
      .meta({ description: "call.utterance only: the call's whole transcript; null when the service serves no HTTP (a local stdio MCP install)" }),
    push_context_url: z.string().nullable().optional().meta({
      description:
        "call.utterance only: where to POST the answer; null when the service serves no HTTP (a local stdio MCP install): answer with the push_context tool",
    }),
    push_token: z.string().optional().meta({ description: "call.utterance only: Bearer token for push_context_url, good for this call until it ends" }),
  })
  .meta({ id: "Event" });
export type EventEnvelope = z.infer<typeof EventEnvelope>;

export const PollEventsQuery = z
  .strictObject({
    agent_id: z.string().optional().meta({ description: "Only this agent's events" }),
    event_type: z.enum(EVENT_TYPES).optional().meta({ description: "Only events of this type; others stay pending" }),
    limit: Pagination.shape.limit,
  })
  .meta({ id: "PollEventsQuery" });

export const PeekEventsQuery = z.strictObject({
  agent_id: z.string().optional().meta({ description: "Only this agent's events" }),
  limit: Pagination.shape.limit,
});

export const EventBatch = z
  .object({
    data: z.array(EventEnvelope),
    limit: z.number().int(),
    has_more: z.boolean().meta({ description: "More are pending: the page was full, or stopped before its events passed 1 MiB" }),
  })
  .meta({ id: "EventBatch", description: "Pending events, oldest first: at most `limit`, and about 1 MiB of them (the first whatever its size)" });

/** Longest wait of one long-poll: below the 60 s a client commonly allows a request. */
export const MAX_WAIT_SECONDS = 50;

/** A long-poll of the mailbox (the MCP wait_for_event): the poll's filters, several types, one call, a wait. */
export const WaitForEventsInput = z.strictObject({
  agent_id: z.string().min(1).optional().meta({ description: "Only this agent's events" }),
  call_id: z.string().min(1).optional().meta({ description: "Only events about this call (its utterances, its end)" }),
  event_types: z.array(z.enum(EVENT_TYPES)).min(1).max(EVENT_TYPES.length).optional().meta({
    description:
      "Only these event types; others stay pending. Default: every type. call.owner_task: the agent's owner (its owner_number) gives it instructions",
  }),
  timeout_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .default(30)
    .meta({ description: `How long to wait for a first event, 0–${MAX_WAIT_SECONDS} s (default 30); 0 only looks` }),
  limit: Pagination.shape.limit,
  cursor: z.string().max(2000).optional().meta({ description: "The cursor of the previous result: waits again with the same filters" }),
});
export type WaitForEventsInput = z.infer<typeof WaitForEventsInput>;
