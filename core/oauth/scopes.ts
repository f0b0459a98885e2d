/**
 * What an OAuth connection (an MCP client signed in with OAuth) may do. Every MCP tool needs
 * exactly one of these (mcp/scopes.ts says which); API keys and agent tokens may do everything.
 */
export const OAUTH_SCOPES = {
  "agentline:read": "See your agents, numbers, calls and transcripts, texts, pending events, webhooks, balance and usage.",
  "agentline:write":
    "Change what costs nothing: create, edit and delete agents, move and release numbers, set webhooks, take events and speak and hang up on calls.",
  "agentline:spend": "Spend your balance: buy phone numbers and place calls (and, on the sandbox, simulate inbound calls and texts).",
} as const;

export type OAuthScope = keyof typeof OAUTH_SCOPES;

/** Every scope, in the order pages and documents list them. */
export const ALL_SCOPES = Object.keys(OAUTH_SCOPES) as OAuthScope[];

/** The scopes of a space-separated scope string that this service knows, in the usual order. */
export function knownScopes(scope: string | undefined): OAuthScope[] {
  const asked = new Set((scope ?? "").split(" "));
  return ALL_SCOPES.filter((s) => asked.has(s));
}
