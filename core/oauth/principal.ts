import type { OAuthScope } from "./scopes.js";

/** Who a request with an OAuth access token acts for, and within what. */
export interface OAuthPrincipal {
  accountId: string;
  /** The connection (grant) the token belongs to. */
  connectionId: string;
  scopes: OAuthScope[];
  /** The one agent the connection may see and act for; null for the whole account. */
  agentId: string | null;
}
