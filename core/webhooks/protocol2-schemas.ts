import { z } from "zod";
import { EventEnvelope } from "../events/schemas.js";
import { PhoneNumber, Timestamp } from "../schemas/common.js";

const Line = z.object({ role: z.enum(["user", "assistant"]), text: z.string(), timestamp: Timestamp });

const Base = z.object({
  id: z.string().meta({ description: "Deduplicate on it; also the webhook-id header" }),
  type: z.string(),
  created_at: Timestamp,
  agent_id: z.string(),
  account_id: z.string(),
  call_id: z.string(),
});

export const SessionStart = Base.extend({
  type: z.literal("call.session.start"),
  session_key: z.string(),
  direction: z.enum(["inbound", "outbound"]),
  from_number: PhoneNumber,
  to_number: PhoneNumber,
  is_owner_call: z.boolean(),
  voice_id: z.string(),
  answered_at: Timestamp.nullable(),
  briefing: z
    .object({
      caller: z.object({ number: PhoneNumber, is_owner: z.boolean() }),
      recent_calls: z.array(
        z.object({
          call_id: z.string(),
          direction: z.enum(["inbound", "outbound"]),
          status: z.string(),
          answered_at: Timestamp.nullable(),
          duration_seconds: z.number().int().nullable(),
          last_lines: z.array(Line),
        }),
      ),
      recent_texts: z.array(z.object({ text: z.string(), received_at: Timestamp })),
    })
    .optional()
    .meta({ description: "With the briefing capability: who is calling and the last five calls and texts with that number" }),
}).meta({ id: "CallSessionStart", description: "A call connected: the session begins." });

export const TaskOpen = Base.extend({
  type: z.literal("call.task.open"),
  session_key: z.string(),
  task_id: z.string().meta({ description: "The turn_id; answer at push_context_url" }),
  text: z.string(),
  input: z.enum(["speech", "dtmf"]),
  conversation: z.array(Line).meta({ description: "The call's newest lines, as call.utterance's conversation" }),
  conversation_omitted: z.number().int().min(0).meta({ description: "How many earlier lines conversation leaves out; read them at transcript_url" }),
  transcript_url: z.string().nullable().meta({ description: "The call's whole transcript; null when the service serves no HTTP" }),
  push_context_url: z.string().nullable().meta({ description: "null when the service serves no HTTP (a local stdio MCP install)" }),
  push_token: z.string(),
}).meta({ id: "CallTaskOpen", description: "The caller finished a turn: answer it through push_context_url." });

export const TaskAmend = Base.extend({
  type: z.literal("call.task.amend"),
  task_id: z.string(),
  text: z.string().meta({ description: "What the caller added" }),
  full_text: z.string().meta({ description: "The whole task so far" }),
  conversation: z.array(Line).meta({ description: "The call's newest lines, as call.utterance's conversation" }),
  conversation_omitted: z.number().int().min(0).meta({ description: "How many earlier lines conversation leaves out; read them at transcript_url" }),
  transcript_url: z.string().nullable().meta({ description: "The call's whole transcript; null when the service serves no HTTP" }),
  push_context_url: z.string().nullable().meta({ description: "null when the service serves no HTTP (a local stdio MCP install)" }),
  push_token: z.string(),
}).meta({ id: "CallTaskAmend", description: "With supports_amend: the caller said more before the task was answered." });

export const TaskCancel = Base.extend({
  type: z.literal("call.task.cancel"),
  task_id: z.string(),
  reason: z.literal("interrupted"),
}).meta({ id: "CallTaskCancel", description: "With supports_cancel: the caller interrupted; the task's answer would be refused." });

export const SessionEnd = Base.extend({
  type: z.literal("call.session.end"),
  status: z.string(),
  ended_by: z.string().nullable(),
  answered_at: Timestamp.nullable(),
  ended_at: Timestamp,
  duration_seconds: z.number().int().nullable(),
  transcript_url: z.string().nullable().meta({ description: "null when the service serves no HTTP (a local stdio MCP install)" }),
}).meta({ id: "CallSessionEnd", description: "The call ended." });

/** Every kind of webhook POST, for the OpenAPI document's `webhooks` section. */
export const WEBHOOK_MESSAGES = [
  { name: "event", summary: "Any event (service-relay/1; and for events outside call sessions, service-relay/2)", schema: EventEnvelope },
  { name: "call.session.start", summary: "service-relay/2: a call connected", schema: SessionStart },
  { name: "call.task.open", summary: "service-relay/2: a caller turn to answer", schema: TaskOpen },
  { name: "call.task.amend", summary: "service-relay/2 with supports_amend: the open task grew", schema: TaskAmend },
  { name: "call.task.cancel", summary: "service-relay/2 with supports_cancel: the caller interrupted", schema: TaskCancel },
  { name: "call.session.end", summary: "service-relay/2: the call ended", schema: SessionEnd },
] as const;
