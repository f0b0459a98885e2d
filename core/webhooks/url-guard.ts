import { outgoingUrlProblem } from "../net/address-guard.js";

/**
 * Why a webhook URL is refused at configuration time, or null. The same rules are checked again
 * at every delivery (core/net/guarded-request.ts): the setting may have changed since, and a name
 * can be re-pointed after it was accepted.
 */
export function webhookUrlProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  return outgoingUrlProblem(url, allowPrivate);
}
