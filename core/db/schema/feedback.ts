import { index, pgTable, text } from "drizzle-orm/pg-core";
import { timestamps } from "../columns.js";
import { accountIdColumn } from "./accounts.js";

/** A report from a user: a bug, a difficulty, a feature request or general feedback. */
export const feedback = pgTable(
  "feedback",
  {
    feedbackId: text("feedback_id").primaryKey(),
    accountId: accountIdColumn(),
    category: text("category").$type<"bug" | "difficulty" | "feature_request" | "feedback">().notNull(),
    message: text("message").notNull(),
    subject: text("subject"),
    severity: text("severity").$type<"low" | "normal" | "high" | "critical">().notNull().default("normal"),
    /** An agent of the account the report is about, if any (kept as text: the agent may be deleted later). */
    agentId: text("agent_id"),
    contactEmail: text("contact_email"),
    status: text("status").$type<"open" | "acknowledged" | "resolved">().notNull().default("open"),
    ...timestamps,
  },
  (t) => [index("feedback_account_idx").on(t.accountId, t.feedbackId)],
);
