import { index, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agents } from "./agents.js";

/**
 * An MCP client an account connected with OAuth: one grant of the authorization server, as the
 * account sees it (GET /v1/auth/connections). Its tokens live in oauth_records under the same
 * grant id; disconnecting deletes them and sets revoked_at.
 */
export const oauthConnections = pgTable(
  "oauth_connections",
  {
    /** `conn_...`: also the authorization server's grant id. */
    connectionId: text("connection_id").primaryKey(),
    accountId: accountIdColumn(),
    /** The OAuth client_id: random for a registered client, a URL for a client ID metadata document. */
    clientId: text("client_id").notNull(),
    /** What the client calls itself (client_name), as the consent page showed it. */
    clientName: text("client_name").notNull(),
    /** The host its authorization answer went to. */
    redirectHost: text("redirect_host").notNull(),
    /** The scopes granted, space-separated. */
    scope: text("scope").notNull(),
    /** Set when the grant is limited to one agent; deleting the agent ends the connection. */
    agentId: text("agent_id").references(() => agents.agentId, { onDelete: "cascade" }),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
    lastUsedAt: timestamptz("last_used_at"),
    expiresAt: timestamptz("expires_at").notNull(),
    revokedAt: timestamptz("revoked_at"),
  },
  (t) => [index("oauth_connections_account_idx").on(t.accountId)],
);
