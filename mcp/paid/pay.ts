import { createHash } from "node:crypto";
import { type CallToolResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { Challenge, Credential, Mcp, Receipt } from "mppx";
import type { Collection, PaymentEngine } from "../../payments/engine.js";

/** The metadata keys of x402's MCP transport (coinbase/x402 specs/transports-v2/mcp.md). */
export const X402_PAYMENT = "x402/payment";
export const X402_PAYMENT_RESPONSE = "x402/payment-response";

/** The payment a tool call carries in `_meta`, as the engine reads it: headers of a fetch Request. */
interface Carried {
  headers: Headers;
  /** The MPP credential, when the payment is one: its receipt names the challenge, its failure is -32043. */
  mpp?: { challengeId: string } | { unreadable: true };
  x402: boolean;
}

/**
 * Turns `_meta` into the headers the engine takes on HTTP: an x402 PaymentPayload (an object, or
 * the base64 of one, as PAYMENT-SIGNATURE carries it) and an MPP credential (mppx's MCP client
 * sends the parsed object; `Authorization: Payment` carries it serialized). x402 wins when both
 * come, as in mppx's own combined wrapper.
 */
function carried(meta: Record<string, unknown> | undefined): Carried {
  const headers = new Headers();
  const x402 = meta?.[X402_PAYMENT];
  if (x402 !== undefined && x402 !== null) {
    // A string is taken as sent: the engine refuses one it cannot decode, naming why.
    headers.set("payment-signature", typeof x402 === "string" ? x402 : encodePaymentSignatureHeader(x402 as PaymentPayload));
    return { headers, x402: true };
  }
  const mpp = meta?.[Mcp.credentialMetaKey];
  if (mpp === undefined || mpp === null) return { headers, x402: false };
  try {
    const header = typeof mpp === "string" ? mpp : Credential.serialize(mpp as Credential.Credential);
    const challengeId = Credential.deserialize(header).challenge.id;
    headers.set("authorization", header);
    return { headers, mpp: { challengeId }, x402: false };
  } catch {
    return { headers, mpp: { unreadable: true }, x402: false };
  }
}

/** What a tool call's payment came to. */
export type ToolPayment =
  | { kind: "paid"; settlementId: string; payer: `0x${string}`; amountMicros: number; meta: Record<string, unknown> }
  | { kind: "refused"; result: CallToolResult };

/**
 * Collects a tool call's payment with the same engine as HTTP: a synthetic POST to
 * `mcp://tool/<name>` (the x402 resource the payment must name), scoped to the tool, so an MPP
 * challenge and an x402 payment for one tool are refused on another; each signature is claimed
 * once in the database. Unpaid (or refused): the x402 PaymentRequired as an error result, with
 * the MPP challenges in its `_meta`. An MPP credential that fails: JSON-RPC -32043.
 */
export async function collectToolPayment(
  engine: PaymentEngine,
  tool: { name: string; title: string },
  args: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
  priceMicros: number,
): Promise<ToolPayment> {
  const payment = carried(meta);
  if (payment.mpp && "unreadable" in payment.mpp) {
    // Refused as any failed credential is, with fresh challenges to pay instead.
    const reason = `_meta["${Mcp.credentialMetaKey}"] is not an MPP credential (an object with challenge and payload, as mppx's client sends it)`;
    throw verificationFailed(reason, Challenge.fromHeadersList((await unpaid(engine, tool, priceMicros)).headers));
  }
  const request = new Request(`mcp://tool/${tool.name}`, { method: "POST", headers: payment.headers });
  // A payment is good once, for one call: a tool call's answer is never stored to replay it
  // (a retry with the same payment is refused, like any payment used twice).
  const requestHash = createHash("sha256")
    .update(`${tool.name}\n${JSON.stringify(args)}`)
    .digest("hex");
  const collected = await engine.collect(request, priceMicros, { scope: `mcp ${tool.name}`, requestHash, description: tool.title, besideAuth: false });
  if (collected.kind !== "paid") {
    const challenge = collected.kind === "challenge" ? collected : await unpaid(engine, tool, priceMicros);
    const reason = collected.kind === "replay" ? "this payment has already been used" : collected.reason;
    const challenges = Challenge.fromHeadersList(challenge.headers);
    if (payment.mpp) throw verificationFailed(reason ?? "the credential was not accepted", challenges);
    return { kind: "refused", result: paymentRequired(challenge.headers, challenges, reason) };
  }
  const receipt: Record<string, unknown> = {};
  if (payment.x402) receipt[X402_PAYMENT_RESPONSE] = decodePaymentResponseHeader(collected.receiptHeaders.get("payment-response")!);
  if (payment.mpp) {
    const settled = Receipt.fromResponse(new Response(null, { headers: collected.receiptHeaders }));
    receipt[Mcp.receiptMetaKey] = { ...settled, challengeId: (payment.mpp as { challengeId: string }).challengeId };
  }
  return { kind: "paid", settlementId: collected.settlementId, payer: collected.payer, amountMicros: collected.amountMicros, meta: receipt };
}

/** MPP's -32043, with the challenges to pay afresh (mppx's client retries with a new credential). */
function verificationFailed(reason: string, challenges: Challenge.Challenge[]): McpError {
  return new McpError(Mcp.paymentVerificationFailedCode, `Payment verification failed: ${reason.replace(/\.+$/, "")}.`, { httpStatus: 402, challenges });
}

/** The challenges of an unpaid call (a replayed payment is answered with them, as a refusal). */
async function unpaid(engine: PaymentEngine, tool: { name: string; title: string }, priceMicros: number): Promise<Extract<Collection, { kind: "challenge" }>> {
  const request = new Request(`mcp://tool/${tool.name}`, { method: "POST" });
  const collected = await engine.collect(request, priceMicros, { scope: `mcp ${tool.name}`, requestHash: "", description: tool.title, besideAuth: false });
  if (collected.kind !== "challenge") throw new Error("an unpaid tool call was not challenged");
  return collected;
}

/** x402's PaymentRequired as a tool result (structured and as text), with MPP's challenges in `_meta`. */
function paymentRequired(headers: Headers, challenges: Challenge.Challenge[], reason: string | undefined): CallToolResult {
  const required = decodePaymentRequiredHeader(headers.get("payment-required")!);
  const structured = { ...required, ...(reason ? { error: `Payment refused: ${reason.replace(/\.+$/, "")}` } : {}) } as Record<string, unknown>;
  return {
    isError: true,
    structuredContent: structured,
    content: [{ type: "text", text: JSON.stringify(structured) }],
    _meta: { [Mcp.paymentRequiredMetaKey]: { httpStatus: 402, challenges } },
  };
}
