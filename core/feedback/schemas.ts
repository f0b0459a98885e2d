import { z } from "zod";
import { Email } from "../auth/schemas.js";
import { Pagination, Timestamp } from "../schemas/common.js";

/** What a report is: a bug, something that was hard to do, a wish, or anything else. */
export const FeedbackCategory = z.enum(["bug", "difficulty", "feature_request", "feedback"]).meta({ description: "What kind of report" });

/** How much the report matters to its sender. */
export const FeedbackSeverity = z.enum(["low", "normal", "high", "critical"]).meta({ description: "How much it matters to you" });

/** Where the report is on our side: new, read by a person, or dealt with. */
export const FeedbackStatus = z
  .enum(["open", "acknowledged", "resolved"])
  .meta({ description: "`open` when submitted; `acknowledged` once a person has read it; `resolved` when dealt with." });

/** The body of POST /v1/feedback. */
export const SubmitFeedbackBody = z
  .strictObject({
    category: FeedbackCategory,
    // Kept as sent (not trimmed): indentation in a pasted log or stack trace is part of the report.
    message: z
      .string()
      .min(1, { abort: true })
      .max(10_000)
      .refine((s) => s.trim().length > 0, "must not be blank")
      .meta({
        description: "What happened. For a bug, what you expected and what happened instead.",
        example: "Expected the call to +14155550100 to ring; it failed at once with no_active_number.",
      }),
    subject: z.string().trim().min(1).max(200).optional().meta({ description: "A one-line summary" }),
    severity: FeedbackSeverity.default("normal"),
    agent_id: z.string().optional().meta({ description: "An agent of your account the report is about (agt_...)" }),
    contact_email: Email.optional().meta({ description: "Where to reach you about this report" }),
  })
  .meta({ id: "SubmitFeedbackRequest" });
export type SubmitFeedbackBody = z.infer<typeof SubmitFeedbackBody>;

/** A feedback report as the API shows it. */
export const Feedback = z
  .object({
    feedback_id: z.string().meta({ example: "fb_01jdz3k7q8m9x2v4b6n8p0r2t4" }),
    category: FeedbackCategory,
    message: z.string(),
    subject: z.string().nullable(),
    severity: FeedbackSeverity,
    agent_id: z.string().nullable(),
    contact_email: z.string().nullable(),
    status: FeedbackStatus,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Feedback" });
export type Feedback = z.infer<typeof Feedback>;

/** The query of GET /v1/feedback: paging plus optional filters. */
export const ListFeedbackQuery = Pagination.extend({
  category: FeedbackCategory.optional(),
  status: FeedbackStatus.optional(),
});
export type ListFeedbackQuery = z.infer<typeof ListFeedbackQuery>;
