import { and, eq } from "drizzle-orm";
import { tryCharge } from "../billing/ledger.js";
import type { InboundSmsDecision } from "../carrier/carrier.js";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { messages } from "../db/schema/messages.js";
import { numbers } from "../db/schema/numbers.js";
import { recordEvent } from "../events/events.js";
import { newId } from "../ids.js";
import { optKeyword, recordOptChoice } from "./opt-outs.js";
import { countInThread } from "./threads.js";

/** Thrown to roll back a text that another report of the same text recorded first. */
class AlreadyReceived extends Error {}

/**
 * A text arriving on a number: stored in the thread of the agent and the sender, and announced
 * as `sms.received`, in one transaction. The body is stored and delivered byte for byte as it
 * came; the service reads no meaning into it but one: a body that is only STOP (or a synonym) or
 * START marks the sender opted out of, or back into, texts from that number. The carrier's id of
 * the text is unique: a carrier repeating a text (a retried webhook, in any process) gets the message it already has,
 * charged and announced once.
 */
export async function receiveInboundSms(core: Core, sms: { to: string; from: string; text: string; carrierRef: string }): Promise<InboundSmsDecision> {
  const sameText = async (db: Executor): Promise<InboundSmsDecision | null> => {
    const [known] = await db.select({ messageId: messages.messageId }).from(messages).where(eq(messages.carrierRef, sms.carrierRef));
    return known ? { accepted: true, messageId: known.messageId } : null;
  };
  try {
    return await receive(core, sms, sameText);
  } catch (error) {
    if (error instanceof AlreadyReceived) return (await sameText(core.db))!;
    throw error;
  }
}

function receive(
  core: Core,
  sms: { to: string; from: string; text: string; carrierRef: string },
  sameText: (db: Executor) => Promise<InboundSmsDecision | null>,
) {
  const now = core.now();
  return core.db.transaction(async (tx): Promise<InboundSmsDecision> => {
    const known = await sameText(tx);
    if (known) return known;
    const [number] = await tx
      .select()
      .from(numbers)
      .where(and(eq(numbers.phoneNumber, sms.to), eq(numbers.status, "active")));
    if (!number?.agentId) return { accepted: false, reason: "not_in_service" };
    const messageId = newId("msg");
    // Charged before anything is stored: a text the account cannot pay for is refused whole.
    const paid = await tryCharge(
      tx,
      {
        accountId: number.accountId,
        category: "sms",
        item: "sms.inbound",
        messageId,
        numberId: number.numberId,
        quantity: 1,
        description: `Text from ${sms.from} to ${sms.to}`,
        at: now,
      },
      core.config.rates.smsInbound,
    );
    if (!paid) return { accepted: false, reason: "insufficient_balance" };
    const conversationId = await countInThread(tx, { accountId: number.accountId, agentId: number.agentId, remoteNumber: sms.from, at: now });
    const [stored] = await tx
      .insert(messages)
      .values({
        messageId,
        accountId: number.accountId,
        agentId: number.agentId,
        conversationId: conversationId,
        numberId: number.numberId,
        direction: "inbound",
        fromNumber: sms.from,
        toNumber: sms.to,
        text: sms.text,
        carrierRef: sms.carrierRef,
        createdAt: now,
      })
      .onConflictDoNothing({ target: messages.carrierRef })
      .returning({ messageId: messages.messageId });
    if (!stored) throw new AlreadyReceived();
    // STOP and START are kept per number and sender; the text is still delivered as any other.
    const opt = optKeyword(sms.text);
    if (opt) await recordOptChoice(tx, { numberId: number.numberId, accountId: number.accountId, remoteNumber: sms.from, ...opt, at: now });
    await recordEvent(
      core,
      tx,
      {
        accountId: number.accountId,
        agentId: number.agentId,
        type: "sms.received",
        payload: {
          message_id: messageId,
          conversation_id: conversationId,
          number_id: number.numberId,
          from_number: sms.from,
          to_number: sms.to,
          text: sms.text,
          received_at: now.toISOString(),
        },
      },
      now,
    );
    return { accepted: true, messageId };
  });
}
