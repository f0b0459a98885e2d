import { and, eq } from "drizzle-orm";
import { requireTransferMinute, startTransferBilling, transferRate } from "../billing/transfer-billing.js";
import type { TransferOutcome } from "../carrier/carrier.js";
import type { Core } from "../context.js";
import type { Transaction } from "../db/database.js";
import { calls } from "../db/schema/calls.js";
import { turns } from "../db/schema/turns.js";
import { AppError, notFound } from "../errors.js";
import { recordEvent } from "../events/events.js";
import { type CallRow, loadCallById, presentCall } from "./call-records.js";
import { isPushTokenFor } from "./push-token.js";
import { TERMINAL_STATUSES } from "./schemas.js";

/** The bus channel on which every change of a call's transfer is announced (the sandbox's softphone shows it). */
export const CALL_TRANSFER_CHANNEL = "calls.transfer";

/** Who asks: a key of the owning account, or the call's push token (a transfer given as a turn's answer). */
export type TransferCredential = { accountId: string } | { pushToken: string };

export interface TransferRequest {
  callId: string;
  toNumber: string;
  mode: "cold" | "warm";
  whisper?: string | undefined;
  /** A transfer given as the answer to this turn: the turn is answered by it (when no text answered it first). */
  answersTurn?: string | undefined;
}

/** The text of the turn that tells the agent a warm transfer failed and the caller is back. */
export function transferFailedText(reason: Exclude<TransferOutcome, "answered">): string {
  return `[transfer failed: ${reason}]`;
}

function badWhisper(): AppError {
  const message = "a whisper is spoken only in a warm transfer (mode: warm)";
  return new AppError("validation_error", `whisper is refused: ${message}.`, { errors: [{ field: "whisper", message }] });
}

async function lockCall(tx: Transaction, credential: TransferCredential, callId: string): Promise<CallRow> {
  const where = "accountId" in credential ? and(eq(calls.callId, callId), eq(calls.accountId, credential.accountId)) : eq(calls.callId, callId);
  const [call] = await tx.select().from(calls).where(where).for("update");
  if (!call) throw notFound("call", callId);
  return call;
}

/** Why a call cannot be transferred now, or nothing. */
function refusalFor(call: CallRow): AppError | null {
  if (TERMINAL_STATUSES.has(call.status)) return new AppError("call_ended", `Call ${call.callId} has ended (${call.status}); it cannot be transferred.`);
  if (call.status !== "in-progress") {
    return new AppError("call_not_in_progress", `Call ${call.callId} is ${call.status}; only a connected call can be transferred.`);
  }
  if (call.transferStatus === "dialing") {
    return new AppError(
      "transfer_in_progress",
      `Call ${call.callId} is already being transferred to ${call.transferTo}; wait for call.transfer.answered or call.transfer.failed.`,
    );
  }
  if (call.transferStatus === "bridged") {
    return new AppError("transfer_in_progress", `Call ${call.callId} has been handed to ${call.transferTo}; the agent no longer speaks on it.`);
  }
  return null;
}

/**
 * Checks, without changing anything, that the call could be transferred now: for a turn answered
 * with text and a transfer, so that a refused transfer leaves the text unspoken too.
 */
export async function checkTransfer(core: Core, credential: TransferCredential, callId: string): Promise<void> {
  if ("pushToken" in credential && !isPushTokenFor(core, callId, credential.pushToken)) throw badPushToken();
  await core.db.transaction(async (tx) => {
    const call = await lockCall(tx, credential, callId);
    const refusal = refusalFor(call);
    if (refusal) throw refusal;
    await requireTransferMinute(tx, call.accountId, transferRate(core));
  });
}

/**
 * Hands a live call to a person (DESIGN §6b; docs/decisions/0083-transfer.md). Recorded first, in
 * one transaction under the call's row lock: the transfer (dialing), the end of the agent's open
 * turn (an answer to it would have nobody to hear it), and `call.transfer.started`; then the
 * carrier is asked to dial. Refused with nothing changed and no carrier request: an ended call
 * (410), a call not yet connected or already being transferred (409), a balance that cannot pay
 * the bridged leg's first minute (402), another account's call (404).
 */
export async function transferCall(core: Core, credential: TransferCredential, request: TransferRequest) {
  if (request.mode === "cold" && request.whisper !== undefined) throw badWhisper();
  if ("pushToken" in credential && !isPushTokenFor(core, request.callId, credential.pushToken)) throw badPushToken();
  const now = core.now();
  const call = await core.db.transaction(async (tx) => {
    const call = await lockCall(tx, credential, request.callId);
    const refusal = refusalFor(call);
    if (refusal) throw refusal;
    if (request.answersTurn) {
      const [turn] = await tx
        .select()
        .from(turns)
        .where(and(eq(turns.turnId, request.answersTurn), eq(turns.callId, call.callId)));
      if (!turn) throw notFound("turn", request.answersTurn);
      if (turn.status !== "open" && turn.status !== "answered") {
        throw new AppError("turn_stale", `Turn ${turn.turnId} is ${turn.status}; answer the newer call.utterance instead.`);
      }
    }
    const rate = transferRate(core);
    await requireTransferMinute(tx, call.accountId, rate);
    // The agent's open turn ends here: answered when the transfer is its answer, else given up.
    if (request.answersTurn) {
      await tx
        .update(turns)
        .set({ status: "answered", closedAt: now })
        .where(and(eq(turns.turnId, request.answersTurn), eq(turns.status, "open")));
    }
    await tx
      .update(turns)
      .set({ status: "abandoned", closedAt: now })
      .where(and(eq(turns.callId, call.callId), eq(turns.status, "open")));
    const [row] = await tx
      .update(calls)
      .set({
        transferTo: request.toNumber,
        transferMode: request.mode,
        transferStatus: "dialing",
        transferWhisper: request.whisper ?? null,
        transferAnsweredAt: null,
        transferRateMicrosPerSecond: rate,
        transferPaidUntil: null,
        updatedAt: now,
      })
      .where(eq(calls.callId, call.callId))
      .returning();
    await recordTransferEvent(core, tx, row!, "call.transfer.started", {}, now);
    await announce(core, tx, row!, { status: "dialing" });
    return row!;
  });
  core.callEngine.turnClosed(call.callId);
  try {
    await core.carrier.transferCall({
      callId: call.callId,
      carrierRef: call.carrierRef,
      to: request.toNumber,
      mode: request.mode,
      whisper: request.whisper ?? null,
    });
  } catch (error) {
    // The carrier could not start the dial: the transfer failed, and the caller is still with the agent.
    core.logger.error({ err: error, call_id: call.callId }, "the carrier did not take the transfer");
    await transferOutcome(core, call.callId, "failed");
  }
  return presentCall((await loadCallById(core.db, call.callId))!);
}

/**
 * What the carrier reports of a transfer. `answered`: the caller is bridged to the person
 * (`call.transfer.answered`; the leg starts being billed). Anything else: `call.transfer.failed`
 * with the reason; a warm transfer gives the caller back to the agent, with a new turn whose text
 * says why (transferFailedText); a cold one is ended by the carrier. Applied once: a report about
 * a transfer that is no longer dialing (answered, failed, or ended with its call) changes nothing.
 */
export async function transferOutcome(core: Core, callId: string, outcome: TransferOutcome): Promise<void> {
  const now = core.now();
  const changed = await core.db.transaction(async (tx) => {
    const [call] = await tx.select().from(calls).where(eq(calls.callId, callId)).for("update");
    // A call that ended took its dialing transfer with it (settleTransferBilling marked it failed).
    if (call?.transferStatus !== "dialing") return null;
    if (outcome === "answered") {
      const [row] = await tx
        .update(calls)
        .set({ transferStatus: "bridged", transferAnsweredAt: now, updatedAt: now })
        .where(eq(calls.callId, callId))
        .returning();
      await startTransferBilling(core, tx, row!);
      await recordTransferEvent(core, tx, row!, "call.transfer.answered", { answered_at: now.toISOString() }, now);
      await announce(core, tx, row!, { status: "answered" });
      return row!;
    }
    const [row] = await tx.update(calls).set({ transferStatus: "failed", updatedAt: now }).where(eq(calls.callId, callId)).returning();
    await recordTransferEvent(
      core,
      tx,
      row!,
      "call.transfer.failed",
      { reason: outcome, returned_to_agent: row!.transferMode === "warm", turn_text: row!.transferMode === "warm" ? transferFailedText(outcome) : null },
      now,
    );
    await announce(core, tx, row!, { status: "failed", reason: outcome });
    return row!;
  });
  if (!changed) return;
  if (outcome !== "answered" && changed.transferMode === "warm") {
    // The caller is back: the agent hears why as a turn, and answers it as any other.
    await core.callEngine.callerUtterance(callId, transferFailedText(outcome), "speech");
  }
}

async function recordTransferEvent(
  core: Core,
  tx: Transaction,
  call: CallRow,
  type: "call.transfer.started" | "call.transfer.answered" | "call.transfer.failed",
  extra: Record<string, unknown>,
  now: Date,
): Promise<void> {
  await recordEvent(
    core,
    tx,
    {
      accountId: call.accountId,
      agentId: call.agentId,
      type,
      payload: {
        call_id: call.callId,
        to_number: call.transferTo,
        mode: call.transferMode,
        ...(type === "call.transfer.started" ? { whisper: call.transferWhisper } : {}),
        ...extra,
      },
    },
    now,
  );
}

/**
 * Tells this process's and the others' listeners (the sandbox's softphones) that a transfer moved,
 * as part of the transaction that moved it: a failed announcement leaves nothing changed.
 */
async function announce(core: Core, tx: Transaction, call: CallRow, change: { status: "dialing" | "answered" | "failed"; reason?: string }): Promise<void> {
  await core.bus.publish(
    CALL_TRANSFER_CHANNEL,
    {
      call_id: call.callId,
      status: change.status,
      to_number: call.transferTo,
      mode: call.transferMode,
      ...(change.reason ? { reason: change.reason } : {}),
    },
    { tx },
  );
}

function badPushToken(): AppError {
  return new AppError("unauthorized", "The push token is not valid for this call.", {
    headers: { "WWW-Authenticate": 'Bearer realm="agentline", error="invalid_token"' },
  });
}

/** The REST route's, the no-signup route's and the MCP tool's operation: by the account's credential. */
export function transferByAccount(
  core: Core,
  accountId: string,
  callId: string,
  body: { to_number: string; mode: "cold" | "warm"; whisper?: string | undefined },
) {
  return transferCall(core, { accountId }, { callId, toNumber: body.to_number, mode: body.mode, whisper: body.whisper });
}
