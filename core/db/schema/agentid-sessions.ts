import { boolean, index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accounts } from "./accounts.js";

/**
 * One AgentID sign-in, from start to the poll that hands out its key. A row, so that whichever
 * process receives the identity provider's redirect or the agent's poll can answer it.
 * Nothing here lets a database reader take a session over: the session id and `state` are
 * stored as SHA-256 hashes, the PKCE verifier and nonce sealed under a server key (and cleared
 * once the callback has used them), and the API key is minted only when the poll collects it.
 */
export const agentIdSessions = pgTable(
  "agentid_sessions",
  {
    /** SHA-256 of the session_id the agent polls with. */
    sessionHash: text("session_hash").primaryKey(),
    /** SHA-256 of the OAuth `state`: how the callback finds its session. */
    stateHash: text("state_hash").notNull().unique(),
    /** The PKCE verifier and the nonce, sealed (AES-256-GCM); null once the callback ran. */
    sealedChecks: text("sealed_checks"),
    /** pending → redeeming → completed → claimed; or denied / failed. */
    status: text("status").$type<AgentIdSessionStatus>().notNull().default("pending"),
    /** Set by a successful callback: whose key the poll mints. */
    accountId: text("account_id").references(() => accounts.accountId, { onDelete: "cascade" }),
    accountCreated: boolean("account_created").notNull().default(false),
    /** Why the sign-in failed or was refused, for the poll's problem detail. */
    failure: text("failure"),
    /**
     * Where the browser goes once signed in, instead of the "you can close this window" page:
     * set when the sign-in was started from another sign-in page (the OAuth one), which then
     * collects the account once instead of an API key.
     */
    continueUrl: text("continue_url"),
    /** Seconds the agent must leave between polls; raised by 5 at each slow_down (RFC 8628). */
    intervalS: integer("interval_s").notNull(),
    lastPolledAt: timestamptz("last_polled_at"),
    expiresAt: timestamptz("expires_at").notNull(),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
  },
  (t) => [index("agentid_sessions_expires_idx").on(t.expiresAt)],
);

export type AgentIdSessionStatus = "pending" | "redeeming" | "completed" | "claimed" | "denied" | "failed";
