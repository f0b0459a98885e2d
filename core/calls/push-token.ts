import { createHmac } from "node:crypto";
import { safeEqual } from "../auth/tokens.js";
import type { Core } from "../context.js";

// Tokens of the calls this process served lately: an HMAC per utterance and per push was a
// fiftieth of a live turn's CPU. A token is a function of the call id and the server secret
// alone (fixed for the process's life), so a kept one never goes stale.
export const PUSH_TOKENS_KEPT = 10_000;
const kept = new WeakMap<Pick<Core, "secrets">, Map<string, string>>();

/**
 * A call's push token: `pt_` + HMAC(server secret, call id). It authorizes context pushes for
 * that one call and nothing else, and needs no storage; it dies with the call, because an ended
 * call refuses every push.
 */
export function pushTokenFor(core: Pick<Core, "secrets">, callId: string): string {
  let tokens = kept.get(core);
  if (!tokens) kept.set(core, (tokens = new Map()));
  let token = tokens.get(callId);
  if (token === undefined) {
    token = "pt_" + createHmac("sha256", core.secrets.derive("push-token")).update(callId).digest("base64url");
    tokens.set(callId, token);
    // The oldest kept is dropped first.
    if (tokens.size > PUSH_TOKENS_KEPT) tokens.delete(tokens.keys().next().value!);
  }
  return token;
}

export function isPushTokenFor(core: Pick<Core, "secrets">, callId: string, token: string): boolean {
  return safeEqual(token, pushTokenFor(core, callId));
}
