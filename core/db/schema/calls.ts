import { bigint, boolean, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { timestamps, timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agentIdColumn } from "./agents.js";

export type CallStatus = "queued" | "ringing" | "in-progress" | "completed" | "busy" | "no-answer" | "failed" | "canceled";

/** A voice call, inbound or outbound. Status in Twilio's vocabulary. Deleted with its agent. */
export const calls = pgTable(
  "calls",
  {
    callId: text("call_id").primaryKey(),
    accountId: accountIdColumn(),
    agentId: agentIdColumn(),
    /** The agent's number the call was placed from or arrived on (kept even if later released). */
    numberId: text("number_id"),
    direction: text("direction").$type<"inbound" | "outbound">().notNull(),
    fromNumber: text("from_number").notNull(),
    toNumber: text("to_number").notNull(),
    status: text("status").$type<CallStatus>().notNull(),
    isOwnerCall: boolean("is_owner_call").notNull().default(false),
    /** The voice preset in effect when the call started. */
    voiceId: text("voice_id").notNull(),
    /** The carrier's id of the call (Twilio's CallSid): unique, so a retried webhook is the same call. */
    carrierRef: text("carrier_ref"),
    /** Who ended it: `agent` (API hangup or end_call), `caller`, `carrier` or `service`. */
    endedBy: text("ended_by"),
    answeredAt: timestamptz("answered_at"),
    endedAt: timestamptz("ended_at"),
    durationSeconds: integer("duration_seconds"),
    /** The rate in effect when the call started, micro-USD per second. */
    rateMicrosPerSecond: bigint("rate_micros_per_second", { mode: "number" }).notNull().default(0),
    /** Talk time is prepaid in blocks: the call is paid through this moment. */
    paidUntil: timestamptz("paid_until"),
    /** What the call's ledger rows add up to so far (debits less refunds). */
    chargedMicros: bigint("charged_micros", { mode: "number" }).notNull().default(0),
    /** The seconds finally billed: the talk time, unless the balance ran out first. */
    billedSeconds: integer("billed_seconds"),
    /** Spoken when the call is answered (the placed call's, or the answering agent's greeting). */
    greeting: text("greeting"),
    /** Outbound: whether the carrier listens for an answering machine (`detect`, `leave_message`); null is off. */
    machineDetection: text("machine_detection").$type<"detect" | "leave_message">(),
    /** Outbound with `leave_message`: what is said after the beep. */
    voicemailMessage: text("voicemail_message"),
    /** Who answered, as the carrier's machine detection told: human, machine, fax, unknown. */
    answeredBy: text("answered_by").$type<"human" | "machine" | "fax" | "unknown">(),
    /** When the voicemail message was spoken (then the call ended). */
    voicemailLeftAt: timestamptz("voicemail_left_at"),
    /** Whether the call is recorded (after the recording notice). */
    record: boolean("record").notNull().default(false),
    /** The number the call is (or was last) being transferred to; see core/calls/transfer.ts. */
    transferTo: text("transfer_to"),
    /** `cold` or `warm`. */
    transferMode: text("transfer_mode").$type<"cold" | "warm">(),
    /** `dialing`, then `bridged` (the person answered) or `failed`. */
    transferStatus: text("transfer_status").$type<"dialing" | "bridged" | "failed">(),
    /** What a warm transfer says to the person before the caller is bridged. */
    transferWhisper: text("transfer_whisper"),
    transferAnsweredAt: timestamptz("transfer_answered_at"),
    /** The bridged leg is billed as an outbound call: its rate, paid time and charge so far. */
    transferRateMicrosPerSecond: bigint("transfer_rate_micros_per_second", { mode: "number" }).notNull().default(0),
    transferPaidUntil: timestamptz("transfer_paid_until"),
    transferChargedMicros: bigint("transfer_charged_micros", { mode: "number" }).notNull().default(0),
    ...timestamps,
  },
  (t) => [
    index("calls_account_idx").on(t.accountId, t.callId),
    index("calls_agent_idx").on(t.agentId, t.callId),
    index("calls_metering_idx").on(t.status, t.paidUntil),
    uniqueIndex("calls_carrier_ref_idx").on(t.carrierRef),
  ],
);
