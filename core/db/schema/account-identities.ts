import { pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";

/**
 * An external identity that signs in to an account: an OpenID Connect issuer and the subject it
 * vouches for (AgentID). The pair is the key, never an e-mail claim, which an issuer may let a
 * user change or reuse.
 */
export const accountIdentities = pgTable(
  "account_identities",
  {
    issuer: text("issuer").notNull(),
    subject: text("subject").notNull(),
    accountId: accountIdColumn(),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.issuer, t.subject] })],
);
