import { index, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";

/**
 * What the OAuth authorization server keeps (docs/decisions/0070-oauth-for-mcp.md):
 * registered clients, browser sessions, sign-in interactions, grants, authorization codes,
 * access and refresh tokens, one row each, so every process sees them and a restart loses none.
 * A row is found by the SHA-256 of its id: for tokens and codes the id is the secret itself,
 * which is therefore never stored (nor its copy in the payload).
 */
export const oauthRecords = pgTable(
  "oauth_records",
  {
    /** What the row is: Client, Session, Interaction, Grant, AuthorizationCode, AccessToken, RefreshToken, ... */
    kind: text("kind").notNull(),
    /** SHA-256 hex of the record's id (the token, code, session or client id). */
    idHash: text("id_hash").notNull(),
    /** The record as the authorization server wrote it, without its id. */
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    /** The grant (connection) it belongs to: revoking the grant deletes every row of it. */
    grantId: text("grant_id"),
    /** SHA-256 hex of a session's uid, by which an interaction finds its session. */
    uidHash: text("uid_hash"),
    /** Set once a code or refresh token was used: using it again is refused. */
    consumedAt: timestamptz("consumed_at"),
    /** Past this the row is dead and swept; null for records that do not expire (clients). */
    expiresAt: timestamptz("expires_at"),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.idHash] }),
    index("oauth_records_grant_idx").on(t.grantId),
    index("oauth_records_uid_idx").on(t.uidHash),
    index("oauth_records_expires_idx").on(t.expiresAt),
  ],
);
