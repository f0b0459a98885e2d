import { and, eq } from "drizzle-orm";
import type { Executor } from "../db/database.js";
import { smsOptOuts } from "../db/schema/sms-opt-outs.js";

/** The words carriers take as "send me no more texts" and as "send them again" (CTIA's list). */
const OPT_OUT = new Set(["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"]);
const OPT_IN = new Set(["START", "YES", "UNSTOP"]);

/** What a received text's body asks, if it is one of those words alone (any case, spaces trimmed). */
export function optKeyword(body: string): { keyword: string; optedOut: boolean } | null {
  const keyword = body.trim().toUpperCase();
  if (OPT_OUT.has(keyword)) return { keyword, optedOut: true };
  if (OPT_IN.has(keyword)) return { keyword, optedOut: false };
  return null;
}

/** Records a recipient's STOP or START for one of the account's numbers. */
export async function recordOptChoice(
  tx: Executor,
  choice: { numberId: string; accountId: string; remoteNumber: string; keyword: string; optedOut: boolean; at: Date },
): Promise<void> {
  await tx
    .insert(smsOptOuts)
    .values({
      numberId: choice.numberId,
      accountId: choice.accountId,
      remoteNumber: choice.remoteNumber,
      optedOut: choice.optedOut,
      keyword: choice.keyword,
      updatedAt: choice.at,
    })
    .onConflictDoUpdate({
      target: [smsOptOuts.numberId, smsOptOuts.remoteNumber],
      set: { optedOut: choice.optedOut, keyword: choice.keyword, updatedAt: choice.at },
    });
}

/** True when the recipient texted STOP to the number and not START since. */
export async function isOptedOut(tx: Executor, numberId: string, remoteNumber: string): Promise<boolean> {
  const [row] = await tx
    .select({ optedOut: smsOptOuts.optedOut })
    .from(smsOptOuts)
    .where(and(eq(smsOptOuts.numberId, numberId), eq(smsOptOuts.remoteNumber, remoteNumber)));
  return row?.optedOut ?? false;
}
