import { createHmac } from "node:crypto";
import type { Core } from "../context.js";
import { safeEqual } from "../auth/tokens.js";

/**
 * A call's push token: `pt_` + HMAC(server secret, call id). It authorizes context pushes for
 * that one call and nothing else, and needs no storage; it dies with the call, because an ended
 * call refuses every push.
 */
export function pushTokenFor(core: Pick<Core, "secrets">, callId: string): string {
  return "pt_" + createHmac("sha256", core.secrets.derive("push-token")).update(callId).digest("base64url");
}

export function isPushTokenFor(core: Pick<Core, "secrets">, callId: string, token: string): boolean {
  return safeEqual(token, pushTokenFor(core, callId));
}
