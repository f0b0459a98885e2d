import { and, desc, eq } from "drizzle-orm";
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { loadAgent } from "../agents/agents.js";
import { balanceOf, charge, insufficientBalance } from "../billing/ledger.js";
import { addMonths } from "../billing/months.js";
import { carrierFailure } from "../carrier/carrier-errors.js";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { numbers } from "../db/schema/numbers.js";
import { AppError, notFound } from "../errors.js";
import { newId } from "../ids.js";
import { type Pagination, toPage } from "../schemas/common.js";
import type { BuyNumberBody, PhoneNumberRecord } from "./schemas.js";

type NumberRow = typeof numbers.$inferSelect;

export function presentNumber(row: NumberRow): PhoneNumberRecord {
  return {
    number_id: row.numberId,
    phone_number: row.phoneNumber,
    agent_id: row.agentId,
    country: row.country,
    number_type: row.numberType,
    status: row.status,
    source: row.source,
    created_at: row.createdAt.toISOString(),
    released_at: row.releasedAt?.toISOString() ?? null,
    renews_at: row.status === "active" && row.autoRenew ? (row.paidThrough?.toISOString() ?? null) : null,
    expires_at: row.status === "active" && !row.autoRenew ? (row.paidThrough?.toISOString() ?? null) : null,
    record_inbound: row.recordInbound,
  };
}

/** The account's number row, or a 404 for a missing or foreign id. */
export async function loadNumber(db: Executor, accountId: string, numberId: string): Promise<NumberRow> {
  const [row] = await db
    .select()
    .from(numbers)
    .where(and(eq(numbers.numberId, numberId), eq(numbers.accountId, accountId)));
  if (!row) throw notFound("number", numberId);
  return row;
}

/** The agent that answers one of the account's active phone numbers (null when none does), or a 404. */
export async function agentAnswering(db: Executor, accountId: string, phoneNumber: string): Promise<string | null> {
  const [row] = await db
    .select({ agentId: numbers.agentId })
    .from(numbers)
    .where(and(eq(numbers.phoneNumber, phoneNumber), eq(numbers.accountId, accountId), eq(numbers.status, "active")));
  if (!row) throw notFound("active number", phoneNumber);
  return row.agentId;
}

/** A carrier failure becomes a clear 4xx (or a 502 when the carrier cannot be used). */
const failedAt =
  (defaultField: string) =>
  (error: unknown): never => {
    throw carrierFailure(error, defaultField);
  };

async function isTaken(db: Executor, phoneNumber: string): Promise<boolean> {
  const [row] = await db.select({ numberId: numbers.numberId }).from(numbers).where(eq(numbers.phoneNumber, phoneNumber));
  return row !== undefined;
}

/**
 * Buys a number for one of the account's agents and charges its first month, in the transaction
 * that records it: no money, no number (402), and a number the account could not pay for goes
 * back to the carrier.
 */
export async function buyNumber(
  core: Core,
  accountId: string,
  input: BuyNumberBody,
  options: { autoRenew?: boolean; leaseDays?: number } = {},
): Promise<PhoneNumberRecord> {
  await loadAgent(core.db, accountId, input.agent_id);
  const fee = core.config.rates.numberMonthly[input.number_type];
  const what = `A ${input.number_type} number's first month`;
  // Refused before the carrier is asked: a real carrier bills the operator for a number the
  // moment it is bought, so buying one only to hand it back unpaid would cost money. (The charge
  // below still decides: a concurrent spend can take the balance meanwhile.)
  const available = await balanceOf(core.db, accountId);
  if (available < fee) throw insufficientBalance(what, fee, available);
  // Two concurrent purchases can be offered the same free sandbox number; the unique index
  // lets one have it and the other asks the carrier again.
  for (let attempt = 0; attempt < 5; attempt++) {
    const bought = await core.carrier
      .buyNumber({ country: input.country, numberType: input.number_type, areaCode: input.area_code }, (n) => isTaken(core.db, n))
      .catch(failedAt("country"));
    const now = core.now();
    const row = await core.db
      .transaction(async (tx) => {
        const [inserted] = await tx
          .insert(numbers)
          .values({
            numberId: newId("num"),
            accountId,
            agentId: input.agent_id,
            phoneNumber: bought.phoneNumber,
            country: input.country,
            numberType: input.number_type,
            source: "purchased",
            carrierRef: bought.carrierRef,
            monthlyFeeMicros: fee,
            // A monthly number renews itself; a prepaid lease runs its days and ends.
            paidThrough: options.leaseDays ? new Date(now.getTime() + options.leaseDays * 86_400_000) : addMonths(now, 1),
            autoRenew: options.autoRenew ?? true,
            createdAt: now,
            updatedAt: now,
          })
          .onConflictDoNothing({ target: numbers.phoneNumber })
          .returning();
        if (!inserted) return null;
        await charge(
          tx,
          {
            accountId,
            category: "number",
            item: "number.purchase",
            numberId: inserted.numberId,
            quantity: 1,
            description: `${inserted.phoneNumber}: first month`,
            at: now,
          },
          fee,
          what,
        );
        return inserted;
      })
      .catch(async (error: unknown) => {
        await core.carrier
          .releaseNumber(bought)
          .catch((failure: unknown) =>
            core.logger.error(
              { err: failure, phone_number: bought.phoneNumber, carrier_ref: bought.carrierRef },
              "a number bought but not recorded could not be handed back; release it at the carrier by hand",
            ),
          );
        throw error;
      });
    if (row) return presentNumber(row);
  }
  throw new AppError("no_numbers_available", "No free number could be reserved; try again or choose another area code.");
}

/** Country and kind of a number bought elsewhere, as far as its digits tell. */
function describeNumber(phoneNumber: string): { country: string; numberType: "local" | "toll_free" | "mobile" } {
  const parsed = parsePhoneNumberFromString(phoneNumber);
  const type = parsed?.getType();
  return {
    country: parsed?.country ?? "ZZ",
    numberType: type === "TOLL_FREE" ? "toll_free" : type === "MOBILE" ? "mobile" : "local",
  };
}

export async function listNumbers(
  core: Core,
  accountId: string,
  query: Pagination & { agent_id?: string | undefined; status?: "active" | "released" | undefined },
) {
  if (query.agent_id) await loadAgent(core.db, accountId, query.agent_id);
  const rows = await core.db
    .select()
    .from(numbers)
    .where(
      and(eq(numbers.accountId, accountId), eq(numbers.status, query.status ?? "active"), query.agent_id ? eq(numbers.agentId, query.agent_id) : undefined),
    )
    .orderBy(desc(numbers.numberId))
    .limit(query.limit + 1)
    .offset(query.offset);
  return toPage(rows, query, presentNumber);
}

export async function getNumber(core: Core, accountId: string, numberId: string): Promise<PhoneNumberRecord> {
  return presentNumber(await loadNumber(core.db, accountId, numberId));
}

function releasedError(row: NumberRow): AppError {
  return new AppError("number_released", `Number ${row.phoneNumber} was released on ${row.releasedAt?.toISOString()}; releasing is permanent.`);
}

/** Moves an active number to another of the account's agents. */
export async function reassignNumber(core: Core, accountId: string, numberId: string, agentId: string): Promise<PhoneNumberRecord> {
  const row = await loadNumber(core.db, accountId, numberId);
  await loadAgent(core.db, accountId, agentId);
  const [updated] = await core.db
    .update(numbers)
    .set({ agentId, updatedAt: core.now() })
    .where(and(eq(numbers.numberId, numberId), eq(numbers.status, "active")))
    .returning();
  if (!updated) throw releasedError(row);
  return presentNumber(updated);
}

/** Changes a number's settings (whether inbound calls are recorded). A released number is a 409. */
export async function updateNumber(core: Core, accountId: string, numberId: string, input: { record_inbound: boolean }): Promise<PhoneNumberRecord> {
  const row = await loadNumber(core.db, accountId, numberId);
  const [updated] = await core.db
    .update(numbers)
    .set({ recordInbound: input.record_inbound, updatedAt: core.now() })
    .where(and(eq(numbers.numberId, numberId), eq(numbers.status, "active")))
    .returning();
  if (!updated) throw releasedError(row);
  return presentNumber(updated);
}

/** Attaches a number bought elsewhere. A number the service has ever held cannot be attached. */
export async function attachNumber(core: Core, accountId: string, input: { phone_number: string; agent_id: string }): Promise<PhoneNumberRecord> {
  await loadAgent(core.db, accountId, input.agent_id);
  const inUse = () =>
    new AppError("number_in_use", `${input.phone_number} is already on the service or was released from it; released numbers are never reused.`);
  if (await isTaken(core.db, input.phone_number)) throw inUse();
  const attached = await core.carrier.attachNumber(input.phone_number).catch(failedAt("phone_number"));
  const { country, numberType } = describeNumber(input.phone_number);
  const [row] = await core.db
    .insert(numbers)
    .values({
      numberId: newId("num"),
      accountId,
      agentId: input.agent_id,
      phoneNumber: input.phone_number,
      country,
      numberType,
      source: "attached",
      carrierRef: attached.carrierRef,
    })
    .onConflictDoNothing({ target: numbers.phoneNumber })
    .returning();
  if (!row) throw inUse();
  return presentNumber(row);
}

/**
 * Releases a number for good: it stays listed as released and is never sold again. Recorded
 * first (so no call or text is taken on it meanwhile), then handed back to the carrier; if the
 * carrier cannot take it back now, the number is active again and the answer says so (502).
 */
export async function releaseNumber(core: Core, accountId: string, numberId: string): Promise<PhoneNumberRecord> {
  const row = await loadNumber(core.db, accountId, numberId);
  const now = core.now();
  const [released] = await core.db
    .update(numbers)
    .set({ status: "released", releasedAt: now, updatedAt: now })
    .where(and(eq(numbers.numberId, numberId), eq(numbers.status, "active")))
    .returning();
  if (!released) throw releasedError(row);
  try {
    await core.carrier.releaseNumber({ phoneNumber: released.phoneNumber, carrierRef: released.carrierRef });
  } catch (error) {
    await core.db.update(numbers).set({ status: "active", releasedAt: null, updatedAt: row.updatedAt }).where(eq(numbers.numberId, numberId));
    throw carrierFailure(error, "number_id");
  }
  return presentNumber(released);
}
