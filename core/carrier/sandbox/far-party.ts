import { and, eq } from "drizzle-orm";
import { loadCall, presentCall } from "../../calls/call-records.js";
import type { Core } from "../../context.js";
import { numbers } from "../../db/schema/numbers.js";
import { AppError, notFound } from "../../errors.js";
import type { FarParty, Refusal } from "../carrier.js";

/**
 * The sandbox's far party, scoped to the caller's own account: a client can ring, text and speak
 * only to its own numbers and calls. Another account's number or call is a 404, as ever.
 */
function farParty(core: Core): FarParty {
  if (!core.carrier.farParty) throw new AppError("not_found", "The sandbox is available only with CARRIER=sandbox.");
  return core.carrier.farParty;
}

const notInService = (to: string) =>
  new AppError("number_not_in_service", `The number you have dialed, ${to}, is not in service: no agent answers it. Reassign it to an agent first.`);

function refused(reason: Refusal, to: string, what: string): AppError {
  if (reason === "insufficient_balance")
    return new AppError("insufficient_balance", `The account that owns ${to} cannot pay for ${what}. Top up, then try again.`);
  return notInService(to);
}

async function ownActiveNumber(core: Core, accountId: string, phoneNumber: string) {
  const [row] = await core.db
    .select()
    .from(numbers)
    .where(and(eq(numbers.phoneNumber, phoneNumber), eq(numbers.accountId, accountId), eq(numbers.status, "active")));
  if (!row) throw notFound("active number", phoneNumber);
  if (!row.agentId) throw notInService(phoneNumber);
  return row;
}

/** Someone calls one of the account's numbers; its agent answers. */
export async function ringInbound(core: Core, accountId: string, input: { to_number: string; from_number: string }) {
  await ownActiveNumber(core, accountId, input.to_number);
  const decision = await farParty(core).ringInbound({ to: input.to_number, from: input.from_number });
  if (!decision.accepted) throw refused(decision.reason, input.to_number, "the call's first minute");
  return { call_id: decision.callId };
}

/** The far party of one of the account's calls finishes a turn of speech. */
export async function farPartySays(core: Core, accountId: string, callId: string, text: string) {
  const call = await loadCall(core.db, accountId, callId);
  if (call.transferStatus === "dialing" || call.transferStatus === "bridged") {
    throw new AppError(
      "transfer_in_progress",
      `Call ${callId} is being transferred to ${call.transferTo}: the agent does not hear the caller, so no turn opens.`,
    );
  }
  const { turnId } = await farParty(core).say(callId, text);
  return { turn_id: turnId };
}

/** The far party hangs up. */
export async function farPartyHangsUp(core: Core, accountId: string, callId: string) {
  await loadCall(core.db, accountId, callId);
  await farParty(core).hangup(callId);
  return presentCall(await loadCall(core.db, accountId, callId));
}

/** Someone texts one of the account's numbers. */
export async function textInbound(core: Core, accountId: string, input: { to_number: string; from_number: string; text: string }) {
  await ownActiveNumber(core, accountId, input.to_number);
  const decision = await farParty(core).deliverSms({ to: input.to_number, from: input.from_number, text: input.text });
  if (!decision.accepted) throw refused(decision.reason, input.to_number, "a received text");
  return { message_id: decision.messageId };
}
