import { AsyncLocalStorage } from "node:async_hooks";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { charge } from "mppx/evm/server";
import { Mppx } from "mppx/server";
import { getAddress } from "viem";
import { formatMicros } from "../core/billing/money.js";
import type { Core } from "../core/context.js";
import { type SettlementBackend, settlementBackend } from "./backends.js";
import { malformedCredential } from "./credential-check.js";
import { type PaymentSettings, paymentSettings } from "./settings.js";
import { claimSignature, markSettled, type PaidRequest, releaseClaim, type Settlement } from "./settlements.js";
import { checkV1Payment, type V1Requirements, v1Receipt, v1Requirements } from "./x402-v1.js";

/** What one request's payment came to, filled in while mppx verifies and settles it. */
interface PaymentScope extends PaidRequest {
  settled?: { settlementId: string; payer: `0x${string}`; amountMicros: number; reference: string };
  replay?: Settlement;
  refusal?: string;
}

/** The outcome of asking a request to pay. */
export type Collection =
  /** Unpaid or badly paid: answer 402 with these challenge headers (and the reason, if any). */
  | { kind: "challenge"; headers: Headers; reason: string | undefined }
  /** Paid and settled (before anything is served). `receiptHeaders` go on the answer. */
  | { kind: "paid"; settlementId: string; payer: `0x${string}`; amountMicros: number; receiptHeaders: Headers }
  /** The same request already paid with this same payment: answer as the first time. */
  | { kind: "replay"; settlement: Settlement };

/**
 * x402 v2 and MPP on the same route through mppx's `evm.charge`: an unpaid request gets both
 * challenges (WWW-Authenticate: Payment and PAYMENT-REQUIRED), either credential is accepted,
 * and the payment is settled before the caller serves anything. Challenges are HMAC-bound to
 * the route (`scope`), amount, asset, network and payee; every signature is claimed in the
 * database, so it is good once, in any process.
 */
export class PaymentEngine {
  readonly settings: PaymentSettings;
  private readonly scope = new AsyncLocalStorage<PaymentScope>();
  private readonly mppx: ReturnType<typeof this.create>;
  /** For requests that also carry a Bearer credential: MPP then travels in Payment-Authorization. */
  private readonly mppxBesideAuth: ReturnType<typeof this.create>;
  /** The settlement backend behind the single-use claim; x402 v1 payments are settled through it directly. */
  private readonly backend: SettlementBackend;

  constructor(private readonly core: Core) {
    this.settings = paymentSettings(core);
    this.backend = this.guard(settlementBackend(core, this.settings));
    this.mppx = this.create(this.backend, false);
    this.mppxBesideAuth = this.create(this.backend, true);
  }

  private create(backend: SettlementBackend, requiresAuth: boolean) {
    const s = this.settings;
    return Mppx.create({
      methods: [
        charge({
          currency: s.asset,
          chainId: s.chainId,
          decimals: s.decimals,
          authorization: { name: s.assetName, version: s.assetVersion },
          recipient: s.payee,
          // mppx declares its own copy of the x402 facilitator types; the shapes agree.
          x402: { facilitator: backend as never },
        }),
      ],
      secretKey: this.core.secrets.derive("mpp-challenges").toString("hex"),
      realm: new URL(this.core.baseUrl).host,
      requiresAuth,
    });
  }

  /** Wraps a backend so that each signature is claimed in the database before it is settled. */
  private guard(backend: SettlementBackend): SettlementBackend {
    const signatureOf = (payload: PaymentPayload, requirements: PaymentRequirements) => {
      const auth = (payload.payload as { authorization: { from: string; nonce: string; to: string; value: string } }).authorization;
      return {
        network: requirements.network,
        asset: getAddress(requirements.asset),
        payer: getAddress(auth.from),
        nonce: auth.nonce.toLowerCase(),
        payee: getAddress(auth.to),
        amountMicros: Number(auth.value),
      };
    };
    return {
      verify: (payload, requirements) => backend.verify(payload, requirements),
      settle: async (payload, requirements) => {
        const request = this.scope.getStore();
        if (!request) throw new Error("payment settled outside a request");
        const signature = signatureOf(payload, requirements);
        const claim = await claimSignature(this.core, signature, request);
        const refuse = (reason: string) => ({ success: false, errorReason: reason, errorMessage: reason, transaction: "", network: requirements.network });
        if (claim.kind === "replay") {
          request.replay = claim.settlement;
          return refuse("this payment was already used for this request");
        }
        if (claim.kind === "used") return refuse((request.refusal = "this payment has already been used"));
        try {
          const settled = await backend.settle(payload, requirements);
          if (!settled.success) {
            await releaseClaim(this.core, claim.settlementId);
            return settled;
          }
          await markSettled(this.core, claim.settlementId, settled.transaction);
          request.settled = {
            settlementId: claim.settlementId,
            payer: signature.payer as `0x${string}`,
            amountMicros: signature.amountMicros,
            reference: settled.transaction,
          };
          return settled;
        } catch (error) {
          await releaseClaim(this.core, claim.settlementId);
          this.core.logger.error({ err: error }, "payment settlement failed");
          return refuse("the payment could not be settled; it was not taken, try again");
        }
      },
    };
  }

  /**
   * Asks a request to pay `amountMicros` for `paid.scope`. The request's body, if any, must be the
   * exact bytes the client sent (MPP binds a digest of it).
   */
  async collect(request: Request, amountMicros: number, paid: PaidRequest & { description: string; besideAuth: boolean }): Promise<Collection> {
    const v1 = request.headers.get("x-payment");
    if (v1 !== null) return this.collectV1(request, v1, amountMicros, paid);
    const malformed = await malformedCredential(request.headers);
    if (malformed) return this.challengeInstead(request, malformed.header, malformed.reason, amountMicros, paid);
    const context: PaymentScope = { scope: paid.scope, requestHash: paid.requestHash };
    const mppx = paid.besideAuth ? this.mppxBesideAuth : this.mppx;
    const result = await this.scope.run(context, () =>
      mppx["evm/charge"]({ amount: formatMicros(amountMicros), scope: paid.scope, description: paid.description })(request),
    );
    if (context.replay) return { kind: "replay", settlement: context.replay };
    if (result.status === 402) {
      const challenge = result.challenge;
      const problem = challenge.headers.get("content-type")?.includes("json") ? ((await challenge.json().catch(() => ({}))) as { detail?: string }) : {};
      return {
        kind: "challenge",
        headers: challenge.headers,
        reason: context.refusal ?? (problem.detail && !/^Payment is required/.test(problem.detail) ? problem.detail : undefined),
      };
    }
    const settled = context.settled!;
    const receipt = result.withReceipt(new Response(null, { status: 200 }));
    return { kind: "paid", settlementId: settled.settlementId, payer: settled.payer, amountMicros: settled.amountMicros, receiptHeaders: receipt.headers };
  }

  /**
   * A refused payment: what the request gets without the header that carried it (the challenges,
   * or what another payment beside it buys), and why it was refused.
   */
  private async challengeInstead(
    request: Request,
    header: string,
    reason: string,
    amountMicros: number,
    paid: PaidRequest & { description: string; besideAuth: boolean },
  ): Promise<Collection> {
    const headers = new Headers(request.headers);
    headers.delete(header);
    const challenge = await this.collect(new Request(request, { headers }), amountMicros, paid);
    return challenge.kind === "challenge" ? { ...challenge, reason } : challenge;
  }

  /** What x402 v1 clients are offered for a request (in the 402's body): empty off Base. */
  v1Accepts(amountMicros: number, resource: string, description: string): V1Requirements[] {
    const requirements = v1Requirements(this.settings, amountMicros, resource, description);
    return requirements ? [requirements] : [];
  }

  /**
   * An x402 v1 `X-PAYMENT`: checked against this request's price offline, then verified and
   * settled through the same guarded backend as v2, so the single-use claim, the stored answer
   * for a retry and the credit to the payer's account are the same. A refusal answers with the
   * usual challenges (and the v1 one in the body).
   */
  private async collectV1(
    request: Request,
    header: string,
    amountMicros: number,
    paid: PaidRequest & { description: string; besideAuth: boolean },
  ): Promise<Collection> {
    const refuse = (reason: string) => this.challengeInstead(request, "x-payment", reason, amountMicros, paid);
    const [requirements] = this.v1Accepts(amountMicros, request.url, paid.description);
    if (!requirements)
      return refuse(`x402 v1 (X-PAYMENT) is accepted on Base only; this service is paid on ${this.settings.network}: pay with x402 v2 (PAYMENT-SIGNATURE)`);
    const checked = await checkV1Payment(header, requirements, this.settings, Math.floor(this.core.now().getTime() / 1000));
    if (typeof checked === "string") return refuse(checked);
    const verified = await this.backend
      .verify(checked.payload, checked.requirements)
      .catch(() => ({ isValid: false, invalidReason: "the payment could not be verified" }));
    if (!verified.isValid) return refuse(verified.invalidReason ?? "the payment was not accepted");
    const context: PaymentScope = { scope: paid.scope, requestHash: paid.requestHash };
    const settled = await this.scope.run(context, () => this.backend.settle(checked.payload, checked.requirements));
    if (context.replay) return { kind: "replay", settlement: context.replay };
    if (!settled.success || !context.settled) return refuse(context.refusal ?? settled.errorMessage ?? "the payment could not be settled");
    const { settlementId, payer, amountMicros: credited } = context.settled;
    const receiptHeaders = new Headers({ "X-PAYMENT-RESPONSE": v1Receipt(requirements, settled.transaction, payer) });
    return { kind: "paid", settlementId, payer, amountMicros: credited, receiptHeaders };
  }
}
