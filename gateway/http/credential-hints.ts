import type { AuthPolicy } from "../../discovery/operation.js";

const TAKES: Record<Exclude<AuthPolicy, "none">, string> = {
  api_key: "an API key ('Authorization: Bearer sk_...')",
  api_key_or_push_token: "an API key ('Bearer sk_...') or the call's push token ('Bearer pt_...')",
  api_key_or_agent_token: "an API key ('Bearer sk_...') or a wallet's agent_token ('Bearer at_...')",
  agent_token_or_payment: "a wallet's agent_token ('Bearer at_...') or a payment (x402 or MPP)",
  payment: "a payment (x402 or MPP), with an API key ('Bearer sk_...') when it should credit that account",
  mcp: "an API key ('Bearer sk_...'), a wallet's agent_token ('Bearer at_...') or an OAuth access token of this service",
};

const KINDS: Array<{ prefix: string; name: string; where: string }> = [
  { prefix: "at_", name: "a wallet's agent_token", where: "it works on the /v1/x402 routes, the sandbox routes and /mcp" },
  { prefix: "pt_", name: "a push token", where: "it authorizes only POST /v1/calls/{call_id}/context for its own call" },
];

/**
 * The 401 detail for a credential of the wrong kind for a route: which credential the route
 * takes, and where the one sent works. Undefined when the token is not a recognisable other kind
 * (then it is simply an invalid API key).
 */
export function wrongCredentialDetail(policy: Exclude<AuthPolicy, "none">, token: string): string | undefined {
  const kind = KINDS.find((k) => token.startsWith(k.prefix));
  if (!kind) return undefined;
  return `This route takes ${TAKES[policy]}, not ${kind.name}: ${kind.where}.`;
}
