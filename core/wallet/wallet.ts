import { and, asc, eq } from "drizzle-orm";
import { createAgent, presentAgent } from "../agents/agents.js";
import { balanceOf, charge } from "../billing/ledger.js";
import { formatMicros } from "../billing/money.js";
import { placeCall } from "../calls/place-call.js";
import type { Core } from "../context.js";
import { agents } from "../db/schema/agents.js";
import { numbers } from "../db/schema/numbers.js";
import { AppError } from "../errors.js";
import type { SendTextBody } from "../messages/schemas.js";
import { sendText } from "../messages/send-text.js";
import { buyNumber, loadNumber, presentNumber } from "../numbers/numbers.js";

/** A prepaid lease runs this long per purchase or renewal. */
export const LEASE_DAYS = 30;

/** The wallet's agent (the one its first number purchase created), or undefined before that purchase. */
async function findWalletAgent(core: Core, accountId: string) {
  const [row] = await core.db.select().from(agents).where(eq(agents.accountId, accountId)).orderBy(asc(agents.agentId)).limit(1);
  return row;
}

/** The wallet's agent: the one its first number purchase created. */
export async function walletAgent(core: Core, accountId: string) {
  const row = await findWalletAgent(core, accountId);
  if (!row) throw new AppError("not_found", "This wallet has no agent yet. Buy a number first: POST /v1/x402/numbers/buy.");
  return row;
}

/** Buys a number on a 30-day lease, creating the wallet's agent with the first one. */
export async function buyWalletNumber(
  core: Core,
  accountId: string,
  input: { country: string; number_type: "local" | "toll_free" | "mobile"; area_code?: string | undefined; agent_name?: string | undefined },
) {
  const existing = await findWalletAgent(core, accountId);
  const agent = existing ? presentAgent(existing) : await createAgent(core, accountId, { name: input.agent_name ?? "Wallet agent" });
  const number = await buyNumber(
    core,
    accountId,
    { agent_id: agent.agent_id, country: input.country, number_type: input.number_type, area_code: input.area_code },
    { autoRenew: false, leaseDays: LEASE_DAYS },
  );
  return { number, agent, balance: formatMicros(await balanceOf(core.db, accountId)), currency: "USD" as const };
}

/** Extends a prepaid lease by 30 days (from its end, or from now if it has ended), for one month's fee. */
export async function renewWalletNumber(core: Core, accountId: string, numberId: string) {
  const number = await loadNumber(core.db, accountId, numberId);
  if (number.status !== "active") throw new AppError("number_released", `Number ${number.phoneNumber} was released; releasing is permanent.`);
  const now = core.now();
  const row = await core.db.transaction(async (tx) => {
    await charge(
      tx,
      { accountId, category: "number", item: "number.renewal", numberId, quantity: 1, description: `${number.phoneNumber}: ${LEASE_DAYS} more days`, at: now },
      number.monthlyFeeMicros,
      "Renewing the lease",
    );
    const from = Math.max(now.getTime(), number.paidThrough?.getTime() ?? now.getTime());
    const [updated] = await tx
      .update(numbers)
      .set({ paidThrough: new Date(from + LEASE_DAYS * 86_400_000), updatedAt: now })
      .where(and(eq(numbers.numberId, numberId), eq(numbers.status, "active")))
      .returning();
    return updated!;
  });
  return presentNumber(row);
}

/** A call from the wallet's agent. */
export async function placeWalletCall(
  core: Core,
  accountId: string,
  toNumber: string,
  options: Omit<Parameters<typeof placeCall>[2], "agent_id" | "to_number"> = {},
) {
  const agent = await walletAgent(core, accountId);
  return placeCall(core, accountId, { ...options, agent_id: agent.agentId, to_number: toNumber });
}

/** A text from the wallet's agent. */
export async function sendWalletText(core: Core, accountId: string, text: Omit<SendTextBody, "agent_id">) {
  const agent = await walletAgent(core, accountId);
  return sendText(core, accountId, { ...text, agent_id: agent.agentId });
}
