import { and, asc, eq } from "drizzle-orm";
import { loadCall } from "../calls/call-records.js";
import { TERMINAL_STATUSES } from "../calls/schemas.js";
import type { Core } from "../context.js";
import { ledgerEntries } from "../db/schema/ledger-entries.js";
import { formatMicros } from "./money.js";
import type { CallVerification } from "./schemas.js";
import { presentTransaction } from "./usage-reports.js";

/**
 * Checks what one call cost against its ledger. An ended call agrees when its ledger rows net
 * to billed_seconds × its rate and to the running total kept on the call; a live call agrees
 * when the running total equals the rows so far. A missing or foreign call is a 404.
 */
export async function verifyCall(core: Core, accountId: string, callId: string): Promise<CallVerification> {
  // One snapshot: a live call is charged block by block, and reading the call and its rows at
  // two moments could report a disagreement that never existed.
  const { call, rows } = await core.db.transaction(
    async (tx) => {
      const call = await loadCall(tx, accountId, callId);
      const rows = await tx
        .select()
        .from(ledgerEntries)
        .where(and(eq(ledgerEntries.accountId, accountId), eq(ledgerEntries.callId, callId)))
        .orderBy(asc(ledgerEntries.createdAt), asc(ledgerEntries.transactionId));
      return { call, rows };
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
  const charged = -rows.reduce((sum, row) => sum + row.amountMicros, 0) || 0;
  const ended = TERMINAL_STATUSES.has(call.status);
  const rate = call.rateMicrosPerSecond;
  // A transferred call's bridged leg (core/billing/transfer-billing.ts) is on its ledger too: kept
  // apart while the call runs, added to its total when it ends.
  const expected = ended ? (call.billedSeconds ?? 0) * rate + call.transferChargedMicros : null;
  const total = ended ? call.chargedMicros : call.chargedMicros + call.transferChargedMicros;
  const agrees = total === charged && (expected === null || expected === charged);
  return {
    call_id: call.callId,
    status: call.status,
    direction: call.direction,
    answered_at: call.answeredAt?.toISOString() ?? null,
    ended_at: call.endedAt?.toISOString() ?? null,
    duration_seconds: call.durationSeconds,
    billed_seconds: call.billedSeconds,
    currency: "USD",
    rate_per_minute: formatMicros(rate * 60),
    rate_per_second: formatMicros(rate),
    expected_charge: expected === null ? null : formatMicros(expected),
    charged: formatMicros(charged),
    ledger: rows.map((row) => {
      const { transaction_id, amount, category, item, quantity, description, created_at } = presentTransaction(row);
      return { transaction_id, amount, category, item, quantity, description, created_at };
    }),
    agrees,
  };
}
