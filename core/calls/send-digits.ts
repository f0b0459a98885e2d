import type { Core } from "../context.js";
import { loadCall } from "./call-records.js";
import { notLive } from "./say-on-call.js";

/**
 * Plays keypad tones into a connected call, for the phone menu at the other end ("press 2 for
 * billing"): `w` waits half a second. Not a line of the transcript (nothing is said) and not
 * billed; an ended call is a 410, one not yet answered a 409.
 */
export async function sendDigits(core: Core, accountId: string, callId: string, digits: string) {
  const call = await loadCall(core.db, accountId, callId);
  const refusal = notLive(call, "keypad tones");
  if (refusal) throw refusal;
  await core.carrier.sendDigits(callId, digits);
  return { call_id: callId, digits, sent_at: core.now().toISOString() };
}
