import type { Core } from "../context.js";
import { loadCall, presentCall } from "./call-records.js";
import { endCall } from "./end-call.js";

/** Hangs up a call at the client's request. Idempotent: an ended call is returned as it is. */
export async function hangupCall(core: Core, accountId: string, callId: string) {
  await endCall(core, await loadCall(core.db, accountId, callId), "agent");
  return presentCall(await loadCall(core.db, accountId, callId));
}
