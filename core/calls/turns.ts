import { and, eq, isNull } from "drizzle-orm";
import { NOTIFY_CHANNEL, NOTIFY_MAX_BYTES } from "../bus-postgres.js";
import type { Core } from "../context.js";
import type { Transaction } from "../db/database.js";
import { formatLiteral } from "../db/json-template.js";
import { calls } from "../db/schema/calls.js";
import { transcriptEntries } from "../db/schema/transcript-entries.js";
import { turns } from "../db/schema/turns.js";
import { AppError } from "../errors.js";
import { EVENTS_CREATED_CHANNEL } from "../events/channels.js";
import { AGENT_EVENTS_LOCK, recordEvent } from "../events/events.js";
import { deliveryTarget, protocol2, recordSessionMessage, relayLiveSince } from "../events/routing.js";
import { newId } from "../ids.js";
import { publicUrl } from "../public-url.js";
import { taskAmend, taskCancel, taskOpen } from "../webhooks/protocol2.js";
import { type CallRow, transcriptUrl } from "./call-records.js";
import { conversations } from "./conversation-cache.js";
import { CONVERSATION_MAX_BYTES, CONVERSATION_MAX_LINES, type ConversationLine, conversationWindow, readConversationWindow } from "./conversation-window.js";
import { pushTokenFor } from "./push-token.js";
import { type UtteranceTurn, utteranceContent, utteranceEnvelope, utteranceTemplate } from "./utterance-envelope.js";

/** One key per call, for the runtime to keep the call's conversation in one session. */
export function sessionKey(agentId: string, callId: string): string {
  return `agentline:${agentId}:${callId}`;
}

/** Where a turn's answer is pushed; null when this process serves no HTTP (see publicUrl). */
export function pushContextUrl(core: Core, callId: string, turnId: string): string | null {
  return publicUrl(core, `/v1/calls/${callId}/context?turn_id=${turnId}`);
}

async function lockLiveCall(tx: Transaction, callId: string): Promise<CallRow> {
  const [call] = await tx.select().from(calls).where(eq(calls.callId, callId)).for("update");
  if (call?.status !== "in-progress") throw notInProgress(callId, call?.status ?? null);
  return call;
}

/**
 * A finished caller utterance: opens a turn and emits `call.utterance`, in one transaction. The
 * call row is locked, so utterances and context pushes on one call are applied one at a time.
 * The turn that was open becomes stale (its answer would now be out of date), unless the agent's
 * protocol-2 runtime declared `supports_amend`: then the open turn grows instead.
 */
export async function openTurn(core: Core, callId: string, text: string, input: "speech" | "dtmf"): Promise<{ turnId: string; amended: boolean }> {
  const now = core.now();
  const opened = await openTurnInOneTrip(core, callId, text, input, now);
  if (opened) return { turnId: opened, amended: false };
  // The agent's events go to a webhook: its delivery job (and protocol-2 message) are built here.
  return core.db.transaction(async (tx) => {
    const call = await lockLiveCall(tx, callId);
    const target = await deliveryTarget(tx, call.agentId, now);
    const amends = protocol2(target)?.has("supports_amend") ?? false;
    const [open] = amends
      ? await tx
          .select()
          .from(turns)
          .where(and(eq(turns.callId, callId), eq(turns.status, "open")))
      : [];
    if (open) {
      const fullText = `${open.text}\n${text}`;
      await tx.update(turns).set({ text: fullText }).where(eq(turns.turnId, open.turnId));
      await tx.insert(transcriptEntries).values({ callId, role: "user", text, turnId: open.turnId, createdAt: now });
      const conversation = await readConversationWindow(tx, callId);
      await recordSessionMessage(core, tx, target, {
        accountId: call.accountId,
        agentId: call.agentId,
        liveTurnId: open.turnId,
        build: (id) =>
          taskAmend(
            id,
            call,
            {
              turnId: open.turnId,
              text,
              fullText,
              conversation,
              transcriptUrl: transcriptUrl(core, callId),
              pushContextUrl: pushContextUrl(core, callId, open.turnId),
              pushToken: pushTokenFor(core, callId),
            },
            now,
          ),
      });
      return { turnId: open.turnId, amended: true };
    }
    await tx
      .update(turns)
      .set({ status: "stale", closedAt: now })
      .where(and(eq(turns.callId, callId), eq(turns.status, "open")));
    const turnId = newId("turn");
    await tx.insert(turns).values({ turnId, callId, text, input, openedAt: now });
    await tx.insert(transcriptEntries).values({ callId, role: "user", text, turnId, createdAt: now });
    const conversation = await readConversationWindow(tx, callId);
    await recordEvent(
      core,
      tx,
      {
        accountId: call.accountId,
        agentId: call.agentId,
        type: "call.utterance",
        ...utteranceContent(
          {
            callId,
            turnId,
            text,
            input,
            transcriptUrl: transcriptUrl(core, callId),
            pushContextUrl: pushContextUrl(core, callId, turnId),
            pushToken: pushTokenFor(core, callId),
          },
          {
            fromNumber: call.fromNumber,
            toNumber: call.toNumber,
            isOwnerCall: call.isOwnerCall,
            sessionKey: sessionKey(call.agentId, callId),
            conversation: conversation.lines,
            conversationOmitted: conversation.omitted,
          },
        ),
        target,
        liveTurnId: turnId,
        sessionMessage: taskOpen,
      },
      now,
    );
    return { turnId, amended: false };
  });
}

interface OpenedTurn {
  outcome: "opened" | "not_in_progress" | "webhook";
  status?: string | null;
  agent_id: string;
  account_id: string;
  from_number: string;
  to_number: string;
  is_owner_call: boolean;
  seq: number;
  before: string[];
  entry_id: number;
  /** The conversation window, when the function read it afresh (the process's copy was not the call's). */
  conversation: ConversationLine[] | null;
  conversation_omitted: number | null;
}

// A server-side function call, which the query builder cannot express; its text is fixed.
const OPEN_TURN =
  "select agentline_open_turn($1, $2, $3, $4, $5::timestamptz, $6, $7, $8, $9::bigint, $10, $11::int, $12::int, $13::int, $14::timestamptz, $15::int, $16, $17::boolean, $18, $19, $20::int) as r";

/**
 * The turn of an agent whose events go to a relay socket or the mailbox, in one round trip (the
 * function agentline_open_turn, core/db/functions/); then, committed, the event is handed from
 * memory to this process's receivers. Returns the turn id, or null when the agent has a webhook.
 */
async function openTurnInOneTrip(core: Core, callId: string, text: string, input: "speech" | "dtmf", now: Date): Promise<string | null> {
  const turnId = newId("turn");
  const createdAt = now.toISOString();
  const line: ConversationLine = { role: "user", text, timestamp: createdAt };
  const cache = conversations(core);
  const known = cache.get(callId);
  // The window this turn carries if the process's copy is still the call's (the function checks).
  const window = known ? conversationWindow([...known.lines, line], known.omitted) : null;
  const eventId = newId("evt");
  const turn: UtteranceTurn = {
    callId,
    turnId,
    text,
    input,
    transcriptUrl: transcriptUrl(core, callId),
    pushContextUrl: pushContextUrl(core, callId, turnId),
    pushToken: pushTokenFor(core, callId),
  };
  let result: OpenedTurn;
  try {
    [{ r: result }] = (await core.dbHandle.rows<{ r: OpenedTurn }>(OPEN_TURN, [
      callId,
      turnId,
      text,
      input,
      createdAt,
      eventId,
      utteranceTemplate(eventId, createdAt, turn),
      // The session key names the agent, which only the function knows: it fills in the %s.
      sessionKey("%s", formatLiteral(callId)),
      known?.lastEntryId ?? null,
      window ? JSON.stringify(window.lines) : null,
      window?.omitted ?? null,
      CONVERSATION_MAX_LINES,
      CONVERSATION_MAX_BYTES,
      relayLiveSince(now).toISOString(),
      AGENT_EVENTS_LOCK,
      core.processId,
      core.dbHandle.kind === "postgres",
      NOTIFY_CHANNEL,
      EVENTS_CREATED_CHANNEL,
      NOTIFY_MAX_BYTES,
    ])) as [{ r: OpenedTurn }];
  } catch (error) {
    cache.forget(callId);
    throw error;
  }
  if (result.outcome === "not_in_progress") throw notInProgress(callId, result.status ?? null);
  if (result.outcome === "webhook") return null;
  const conversation = result.conversation ? { lines: result.conversation, omitted: result.conversation_omitted ?? 0 } : window!;
  // The envelope the function stored, built again here for this process's receivers.
  const envelope = utteranceEnvelope({ eventId, createdAt, agentId: result.agent_id, accountId: result.account_id }, turn, {
    fromNumber: result.from_number,
    toNumber: result.to_number,
    isOwnerCall: result.is_owner_call,
    sessionKey: sessionKey(result.agent_id, callId),
    conversation: conversation.lines,
    conversationOmitted: conversation.omitted,
  });
  // The cache grows its own copy of the lines: the envelope's must stay as they were sent.
  if (result.conversation) cache.set(callId, result.entry_id, [...result.conversation], conversation.omitted);
  else cache.append(callId, known!.lastEntryId, result.entry_id, line);
  // Committed: this process's relay socket (and any waiting poll) gets it from memory.
  core.bus.announce(EVENTS_CREATED_CHANNEL, {
    agent_id: result.agent_id,
    account_id: result.account_id,
    seq: result.seq,
    before: result.before,
    event: envelope,
  });
  return turnId;
}

function notInProgress(callId: string, status: string | null): AppError {
  return new AppError("call_not_in_progress", `Call ${callId} is ${status ?? "unknown"}; the far party can speak only on a connected call.`);
}

/**
 * The caller spoke over the agent: the open turn is cancelled and its answer refused. A
 * protocol-2 runtime that declared `supports_cancel` is told with `call.task.cancel`.
 */
export async function cancelOpenTurn(core: Core, callId: string): Promise<string | null> {
  const now = core.now();
  return core.db.transaction(async (tx) => {
    const [call] = await tx.select().from(calls).where(eq(calls.callId, callId)).for("update");
    if (!call) return null;
    const [cancelled] = await tx
      .update(turns)
      .set({ status: "cancelled", closedAt: now })
      .where(and(eq(turns.callId, callId), eq(turns.status, "open")))
      .returning({ turnId: turns.turnId });
    if (!cancelled) return null;
    const target = await deliveryTarget(tx, call.agentId, now);
    if (protocol2(target)?.has("supports_cancel")) {
      await recordSessionMessage(core, tx, target, {
        accountId: call.accountId,
        agentId: call.agentId,
        build: (id) => taskCancel(id, call, cancelled.turnId, now),
      });
    }
    return cancelled.turnId;
  });
}

/**
 * The turn went unanswered for the turn timeout: claim the one filler it may have (the update
 * succeeds at most once per turn, whichever process tries) and record it. Returns the text to
 * speak, or null when the turn was answered, closed or already filled.
 */
export async function claimFiller(core: Core, callId: string, turnId: string): Promise<string | null> {
  const now = core.now();
  return core.db.transaction(async (tx) => {
    // The call's row first, as an utterance, an amend, an interruption and a push lock it before
    // the turn's: the filler's transcript line needs a share of that row (its foreign key), and
    // taken after the turn's row it deadlocked with an amend holding the call and waiting for the turn.
    await tx.select({ callId: calls.callId }).from(calls).where(eq(calls.callId, callId)).for("update");
    const [claimed] = await tx
      .update(turns)
      .set({ fillerSpokenAt: now })
      .where(and(eq(turns.turnId, turnId), eq(turns.status, "open"), isNull(turns.fillerSpokenAt)))
      .returning({ turnId: turns.turnId });
    if (!claimed) return null;
    const text = core.config.turnFillerText;
    await tx.insert(transcriptEntries).values({ callId, role: "assistant", text, turnId, createdAt: now });
    return text;
  });
}
