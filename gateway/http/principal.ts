import type { Actor } from "../../core/auth/agent-tokens.js";
import type { ApiKeyPrincipal } from "../../core/auth/api-keys.js";
import type { OAuthPrincipal } from "../../core/oauth/connections.js";
import type { AuthPolicy } from "../../discovery/operation.js";

/** A request under the `none` policy: no one in particular. */
export type Anonymous = { kind: "anonymous" };
/** An account's API key. */
export type ApiKeyAuth = ApiKeyPrincipal & { kind: "api_key" };
/** A call's push token, not yet checked: only the handler knows which call it must match. */
export type PushTokenAuth = { kind: "push_token"; token: string };
/** An account's agent token (a no-signup wallet's, or one minted with an API key). */
export type AgentTokenAuth = { kind: "agent_token"; accountId: string; tokenId: string };
/** An MCP client signed in with OAuth: its account, scopes, perhaps one agent, and its connection (the credential). */
export type OAuthAuth = OAuthPrincipal & { kind: "oauth" };
/** The credential a paying request came with, naming the account to credit. */
export type PayingCredential = { kind: "api_key"; id: string } | { kind: "agent_token"; id: string; token: string };
/**
 * A request that still has to pay: the payment step resolves it to a wallet or a payment, and no
 * handler ever sees it. `accountId` and `credential` when a credential names the account.
 */
export type UnpaidAuth = { kind: "unpaid"; accountId: string | null; credential?: PayingCredential };
/**
 * The account of a wallet on the /v1/x402 routes: by agent token, or by a payment for this
 * request (then `settlementId` names it: the payment was credited to the account first).
 */
export type WalletAuth = { kind: "wallet"; accountId: string; settlementId: string | null };
/**
 * A settled payment (the top-up): who paid, how much, the account it was credited to, and the
 * credential that named that account (none: the payer's own wallet account).
 */
export type PaymentAuth = {
  kind: "payment";
  accountId: string;
  settlementId: string;
  payer: `0x${string}`;
  amountMicros: number;
  credential: PayingCredential | null;
};

/** Who a request is from, or acts for: one union, narrowed by `kind`. */
export type Principal = Anonymous | ApiKeyAuth | PushTokenAuth | AgentTokenAuth | OAuthAuth | UnpaidAuth | WalletAuth | PaymentAuth;

/** Who sent a request, as its credentials say: a wallet or a payment is only ever made by the payment step. */
export type Caller = Exclude<Principal, WalletAuth | PaymentAuth>;

/** The kinds of principal a handler receives under each auth policy (a policy left out fails to compile). */
interface KindsFor extends Record<AuthPolicy, Exclude<Principal["kind"], "unpaid">> {
  none: "anonymous";
  api_key: "api_key";
  api_key_or_push_token: "api_key" | "push_token";
  api_key_or_agent_token: "api_key" | "agent_token";
  agent_token_or_payment: "wallet";
  payment: "payment";
  mcp: "api_key" | "agent_token" | "oauth";
}

/** The principal a handler receives under policy A. */
export type PrincipalFor<A extends AuthPolicy> = Extract<Principal, { kind: KindsFor[A] }>;

/** The account a caller names, or null: a push token names a call, and an unpaid request may name none until it pays. */
export function accountOf(caller: Caller): string | null {
  switch (caller.kind) {
    case "anonymous":
    case "push_token":
      return null;
    default:
      return caller.accountId;
  }
}

/** The credential behind a request authenticated by an API key or an agent token. */
export function actorOf(auth: ApiKeyAuth | AgentTokenAuth): Actor {
  return auth.kind === "api_key"
    ? { accountId: auth.accountId, kind: "api_key", id: auth.keyId }
    : { accountId: auth.accountId, kind: "agent_token", id: auth.tokenId };
}
