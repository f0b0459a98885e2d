import { eq } from "drizzle-orm";
import { credit } from "../billing/ledger.js";
import type { SmsStatusReport } from "../carrier/carrier.js";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { messages, type OutboundSmsStatus } from "../db/schema/messages.js";
import { recordEvent } from "../events/events.js";

type MessageRow = typeof messages.$inferSelect;

// A sent text only moves forward: queued, sent, then one of the ends.
const PROGRESS: Record<OutboundSmsStatus, number> = { queued: 0, sent: 1, delivered: 2, undelivered: 2, failed: 2 };

/**
 * Moves a sent text to a new status, with its `sms.status` event, in one transaction. Carriers
 * repeat themselves and report out of order: a report that would not move the text forward (a
 * repeat, a `sent` after `delivered`, anything after an end) changes nothing. A report naming
 * another carrier id than the text's is not about it. A text that `failed` was never sent, so its
 * charge is refunded (an `undelivered` one was sent and stays charged). Returns whether it changed.
 */
export async function applySmsStatus(core: Core, report: SmsStatusReport): Promise<boolean> {
  return core.db.transaction(async (tx) => {
    const [message] = await tx.select().from(messages).where(eq(messages.messageId, report.messageId)).for("update");
    if (message?.direction !== "outbound") return false;
    if (report.carrierRef && message.carrierRef && report.carrierRef !== message.carrierRef) return false;
    const current = message.status ?? "queued";
    if (PROGRESS[report.status] <= PROGRESS[current]) return false;
    const now = core.now();
    const errorCode = report.status === "failed" || report.status === "undelivered" ? (report.errorCode ?? null) : null;
    await tx
      .update(messages)
      .set({
        status: report.status,
        errorCode,
        statusUpdatedAt: now,
        ...(message.carrierRef ? {} : report.carrierRef ? { carrierRef: report.carrierRef } : {}),
      })
      .where(eq(messages.messageId, message.messageId));
    if (report.status === "failed") await refundText(core, tx, message, "not sent (failed)");
    await recordEvent(
      core,
      tx,
      {
        accountId: message.accountId,
        agentId: message.agentId,
        type: "sms.status",
        payload: {
          message_id: message.messageId,
          conversation_id: message.conversationId,
          status: report.status,
          ...(errorCode ? { error_code: errorCode } : {}),
          from_number: message.fromNumber,
          to_number: message.toNumber,
          segments: message.segments,
          updated_at: now.toISOString(),
        },
      },
      now,
    );
    return true;
  });
}

/** Gives back what sending a text charged. */
export async function refundText(core: Core, tx: Executor, message: MessageRow, why: string): Promise<void> {
  if (!message.chargedMicros) return;
  await credit(
    tx,
    {
      accountId: message.accountId,
      category: "sms",
      item: "sms.outbound",
      messageId: message.messageId,
      numberId: message.numberId,
      quantity: -(message.segments ?? 0),
      description: `Text to ${message.toNumber} ${why}, refunded`,
      at: core.now(),
    },
    message.chargedMicros,
  );
}
