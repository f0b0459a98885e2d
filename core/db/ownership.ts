import { text } from "drizzle-orm/pg-core";
import { accounts } from "./schema/accounts.js";
import { agents } from "./schema/agents.js";

/** The account a row belongs to; deleting the account deletes the row. */
export function accountIdColumn() {
  return text("account_id")
    .notNull()
    .references(() => accounts.accountId, { onDelete: "cascade" });
}

/** The agent a row belongs to; deleting the agent deletes the row. */
export function agentIdColumn() {
  return text("agent_id")
    .notNull()
    .references(() => agents.agentId, { onDelete: "cascade" });
}
