import { and, desc, eq, type SQL } from "drizzle-orm";
import { loadAgent } from "../agents/agents.js";
import type { Core } from "../context.js";
import { feedback } from "../db/schema/feedback.js";
import { newId } from "../ids.js";
import { type Page, toPage } from "../schemas/common.js";
import type { Feedback, ListFeedbackQuery, SubmitFeedbackBody } from "./schemas.js";

type FeedbackRow = typeof feedback.$inferSelect;

function presentFeedback(row: FeedbackRow): Feedback {
  return {
    feedback_id: row.feedbackId,
    category: row.category,
    message: row.message,
    subject: row.subject,
    severity: row.severity,
    agent_id: row.agentId,
    contact_email: row.contactEmail,
    status: row.status,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/**
 * Files a report. An agent_id must name an agent of this account: another account's agent is a
 * 404, as it is everywhere, so a report cannot be used to probe which agent ids exist.
 */
export async function submitFeedback(core: Core, accountId: string, input: SubmitFeedbackBody): Promise<Feedback> {
  if (input.agent_id !== undefined) await loadAgent(core.db, accountId, input.agent_id);
  const [row] = await core.db
    .insert(feedback)
    .values({
      feedbackId: newId("fb"),
      accountId,
      category: input.category,
      message: input.message,
      subject: input.subject ?? null,
      severity: input.severity,
      agentId: input.agent_id ?? null,
      contactEmail: input.contact_email ?? null,
    })
    .returning();
  return presentFeedback(row!);
}

/** The account's own reports, newest first, optionally narrowed by category and status. */
export async function listFeedback(core: Core, accountId: string, query: ListFeedbackQuery): Promise<Page<Feedback>> {
  const filters: SQL[] = [eq(feedback.accountId, accountId)];
  if (query.category) filters.push(eq(feedback.category, query.category));
  if (query.status) filters.push(eq(feedback.status, query.status));
  const rows = await core.db
    .select()
    .from(feedback)
    .where(and(...filters))
    .orderBy(desc(feedback.feedbackId))
    .limit(query.limit + 1)
    .offset(query.offset);
  return toPage(rows, query, presentFeedback);
}
