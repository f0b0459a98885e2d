import type { EndedBy } from "../carrier/carrier.js";
import type { Core } from "../context.js";
import type { CallRow } from "./call-records.js";
import { applyCallStatus } from "./call-status.js";
import { TERMINAL_STATUSES } from "./schemas.js";

/**
 * Ends a call from the service's side: recorded first (completed, or canceled if never
 * answered), then the carrier is told to drop it. Ending an ended call changes nothing.
 */
export async function endCall(core: Core, call: CallRow, endedBy: EndedBy, at?: Date): Promise<void> {
  if (TERMINAL_STATUSES.has(call.status)) return;
  const ended = await applyCallStatus(core, call.callId, "completed", endedBy, at ? { at } : {});
  if (ended) await core.carrier.dropCall({ callId: call.callId, carrierRef: ended.carrierRef, status: ended.status });
}
