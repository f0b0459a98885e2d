import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import { loadAgent } from "../agents/agents.js";
import { balanceOf, insufficientBalance, tryCharge } from "../billing/ledger.js";
import { carrierFailure } from "../carrier/carrier-errors.js";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { conversations } from "../db/schema/conversations.js";
import { messages } from "../db/schema/messages.js";
import { numbers } from "../db/schema/numbers.js";
import { AppError } from "../errors.js";
import { newId } from "../ids.js";
import { presentMessage } from "./messages.js";
import { isOptedOut, recordOptChoice } from "./opt-outs.js";
import type { SendTextBody } from "./schemas.js";
import { countSegments } from "./segments.js";
import { applySmsStatus, refundText } from "./sms-status.js";
import { countInThread } from "./threads.js";

type MessageRow = typeof messages.$inferSelect;

/** The number a text goes from: the one asked for, if the agent's, else the agent's oldest active one. */
async function sendingNumber(tx: Executor, agentId: string, fromNumber: string | undefined) {
  const [number] = await tx
    .select()
    .from(numbers)
    .where(and(eq(numbers.agentId, agentId), eq(numbers.status, "active"), fromNumber ? eq(numbers.phoneNumber, fromNumber) : undefined))
    .orderBy(asc(numbers.numberId))
    .limit(1);
  if (number) return number;
  if (fromNumber) {
    const message = `${fromNumber} is not an active number of agent ${agentId}`;
    throw new AppError("validation_error", `The text cannot be sent: ${message}.`, { errors: [{ field: "from_number", message }] });
  }
  const message = `agent ${agentId} has no active phone number to text from; buy one with POST /v1/numbers`;
  throw new AppError("validation_error", `The text cannot be sent: ${message}.`, { errors: [{ field: "agent_id", message }] });
}

/**
 * Sends a text from the agent's number. Refused before anything is charged when the recipient
 * texted STOP to that number (409 recipient_opted_out). Each segment is charged from the
 * balance first (402 when it cannot cover them, before the carrier is asked); the text is then
 * recorded as queued, in the thread of the agent and the recipient, and handed to the carrier.
 * A carrier that refuses it at once (opted out, an unreachable number) or cannot be reached
 * leaves no text and refunds the charge. The answer is the text as queued; its progress comes as
 * `sms.status` events.
 */
export async function sendText(core: Core, accountId: string, input: SendTextBody) {
  const { segments } = countSegments(input.text);
  const price = segments * core.config.rates.smsOutboundPerSegment;
  const queued = await core.db.transaction(async (tx) => {
    const agent = await loadAgent(tx, accountId, input.agent_id);
    const number = await sendingNumber(tx, agent.agentId, input.from_number);
    if (await isOptedOut(tx, number.numberId, input.to_number)) {
      throw new AppError(
        "recipient_opted_out",
        `${input.to_number} texted STOP to ${number.phoneNumber} and has not texted START since; the text was not sent and nothing was charged.`,
      );
    }
    const now = core.now();
    const messageId = newId("msg");
    const paid = await tryCharge(
      tx,
      {
        accountId,
        category: "sms",
        item: "sms.outbound",
        messageId,
        numberId: number.numberId,
        quantity: segments,
        description: `Text to ${input.to_number} from ${number.phoneNumber}, ${segments} segment${segments === 1 ? "" : "s"}`,
        at: now,
      },
      price,
    );
    if (!paid) throw insufficientBalance(`A text of ${segments} segment${segments === 1 ? "" : "s"}`, price, await balanceOf(tx, accountId));
    const conversationId = await countInThread(tx, { accountId: accountId, agentId: agent.agentId, remoteNumber: input.to_number, at: now });
    const [row] = await tx
      .insert(messages)
      .values({
        messageId,
        accountId,
        agentId: agent.agentId,
        conversationId: conversationId,
        numberId: number.numberId,
        direction: "outbound",
        fromNumber: number.phoneNumber,
        toNumber: input.to_number,
        text: input.text,
        status: "queued",
        segments,
        chargedMicros: price,
        statusUpdatedAt: now,
        createdAt: now,
      })
      .returning();
    return row!;
  });

  let carrierRef: string;
  try {
    ({ carrierRef } = await core.carrier.sendSms({ messageId: queued.messageId, from: queued.fromNumber, to: queued.toNumber, text: queued.text }));
  } catch (error) {
    const failure = carrierFailure(error, "to_number");
    if (failure instanceof AppError) {
      if (await withdraw(core, queued)) {
        // The carrier keeps its own opt-out list: what it says is kept here too, until START.
        if (failure.code === "recipient_opted_out") {
          await recordOptChoice(core.db, {
            numberId: queued.numberId!,
            accountId,
            remoteNumber: queued.toNumber,
            keyword: "CARRIER",
            optedOut: true,
            at: core.now(),
          });
        }
        throw failure;
      }
      // Else a report that arrived meanwhile says the carrier took it after all: it stands.
    } else {
      core.logger.error({ err: error, message_id: queued.messageId }, "the carrier did not take the text");
      await applySmsStatus(core, { messageId: queued.messageId, status: "failed" });
    }
    return presentMessage({ ...queued, ...(await reload(core, queued.messageId)) });
  }
  await core.db
    .update(messages)
    .set({ carrierRef })
    .where(and(eq(messages.messageId, queued.messageId), isNull(messages.carrierRef)));
  // The text as it was queued: the carrier's reports (sms.status) say what became of it.
  return presentMessage({ ...queued, carrierRef });
}

async function reload(core: Core, messageId: string): Promise<Partial<MessageRow>> {
  const [row] = await core.db.select().from(messages).where(eq(messages.messageId, messageId));
  return row ?? {};
}

/**
 * A text the carrier refused at once was never sent: it is removed (its thread restored) and its
 * charge refunded. False when a carrier report already moved it on (then it stands).
 */
async function withdraw(core: Core, queued: MessageRow): Promise<boolean> {
  return core.db.transaction(async (tx) => {
    const [removed] = await tx
      .delete(messages)
      .where(and(eq(messages.messageId, queued.messageId), eq(messages.status, "queued"), isNull(messages.carrierRef)))
      .returning({ messageId: messages.messageId });
    if (!removed) return false;
    const [latest] = await tx
      .select({ createdAt: messages.createdAt })
      .from(messages)
      .where(eq(messages.conversationId, queued.conversationId))
      .orderBy(desc(messages.messageId))
      .limit(1);
    if (latest) {
      await tx
        .update(conversations)
        .set({ messageCount: sql`${conversations.messageCount} - 1`, lastMessageAt: latest.createdAt })
        .where(eq(conversations.conversationId, queued.conversationId));
    } else {
      await tx.delete(conversations).where(eq(conversations.conversationId, queued.conversationId));
    }
    await refundText(core, tx, queued, "refused by the carrier");
    return true;
  });
}
