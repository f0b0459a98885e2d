import { z } from "zod";
import { Agent, UpdateAgentBody } from "../agents/schemas.js";
import { formatMicros, Money, USD_AMOUNT } from "../billing/money.js";
import { PlaceCallBody } from "../calls/schemas.js";
import { SendTextBody } from "../messages/schemas.js";
import { BuyNumberBody, PhoneNumberRecord } from "../numbers/schemas.js";
import { PhoneNumber } from "../schemas/common.js";

export const WalletBuyBody = BuyNumberBody.omit({ agent_id: true })
  .extend({ agent_name: z.string().trim().min(1).max(100).optional().meta({ description: "Name of the agent, when this purchase creates it" }) })
  .meta({ id: "WalletBuyNumberRequest" });

export const WalletPurchase = z
  .object({ number: PhoneNumberRecord, agent: Agent, balance: Money, currency: z.literal("USD") })
  .meta({ id: "WalletPurchase", description: "The number (a 30-day lease) and the wallet's agent that answers it" });

export const WalletRenewBody = z.strictObject({ number_id: z.string().min(1) }).meta({ id: "WalletRenewRequest" });

export const WalletCallBody = z
  .strictObject({
    to_number: PhoneNumber,
    from_number: PlaceCallBody.shape.from_number,
    greeting: PlaceCallBody.shape.greeting,
    machine_detection: PlaceCallBody.shape.machine_detection,
    voicemail_message: PlaceCallBody.shape.voicemail_message,
    record: PlaceCallBody.shape.record,
  })
  .meta({ id: "WalletCallRequest" });

export const WalletTextBody = SendTextBody.omit({ agent_id: true }).meta({ id: "WalletTextRequest" });

export const WalletAgentUpdate = UpdateAgentBody;

/** The top-up's query, documenting this server's bounds (TOPUP_MIN_USD, TOPUP_MAX_USD) as the price enforces them. */
export function topupQuery(bounds: { minMicros: number; maxMicros: number }) {
  return z.strictObject({
    amount: z
      .string()
      .regex(USD_AMOUNT, "must be a dollar amount such as 5 or 2.50 (at most 6 decimals)")
      .meta({
        description: `USD to add to the balance: from ${formatMicros(bounds.minMicros)} to ${formatMicros(bounds.maxMicros)}, at most 6 decimals`,
        example: "5.00",
      }),
  });
}

export const TopupResult = z
  .object({
    agent_token: z
      .string()
      .nullable()
      .meta({
        description:
          "Send as 'Authorization: Bearer at_...' on /v1/x402 routes. Paid with no credential: a new token, shown once. With an agent_token: that token. " +
          "With an API key: null (POST /v1/auth/agent-tokens mints one explicitly).",
      }),
    account_id: z.string(),
    payer: z.string().meta({ description: "The wallet that paid" }),
    credited: Money,
    balance: Money,
    currency: z.literal("USD"),
    test_money: z.boolean().meta({ description: "True in PAYMENTS_MODE=local: nothing moved on a chain" }),
  })
  .meta({ id: "TopupResult" });
