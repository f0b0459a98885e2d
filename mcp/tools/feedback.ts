import { listFeedback, submitFeedback } from "../../core/feedback/feedback.js";
import { Feedback, ListFeedbackQuery, SubmitFeedbackBody } from "../../core/feedback/schemas.js";
import { listOf } from "../../core/schemas/common.js";
import { defineTool } from "../tool.js";

export const feedbackTools = [
  defineTool({
    name: "send_feedback",
    title: "Report a bug or request a feature",
    description: "Files a report with the people who run this service: a bug, a difficulty, a feature request or general feedback.",
    input: [SubmitFeedbackBody],
    output: Feedback,
    hints: {},
    run: ({ core, accountId }, args) => submitFeedback(core, accountId, args),
  }),
  defineTool({
    name: "list_feedback",
    title: "List your feedback reports",
    description: "The account's own reports, newest first, with their status.",
    input: [ListFeedbackQuery],
    output: listOf(Feedback),
    hints: { readOnly: true },
    run: ({ core, accountId }, args) => listFeedback(core, accountId, args),
  }),
];
