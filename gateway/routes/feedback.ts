import { listFeedback, submitFeedback } from "../../core/feedback/feedback.js";
import { Feedback, ListFeedbackQuery, SubmitFeedbackBody } from "../../core/feedback/schemas.js";
import { listOf } from "../../core/schemas/common.js";
import { defineRoute } from "../http/route.js";

const tags = ["Feedback"];

/** Reports from users to the people running the service. */
export const feedbackRoutes = [
  defineRoute({
    operationId: "submitFeedback",
    method: "post",
    path: "/v1/feedback",
    summary: "Submit a feedback report",
    description:
      "A bug, a difficulty, a feature request or general feedback. `category` and `message` are required; an `agent_id` must be one of your agents (else 404).",
    tags,
    auth: "api_key",
    body: SubmitFeedbackBody,
    response: { status: 201, description: "The report, filed with status `open`", schema: Feedback },
    errors: [404],
    handler: ({ core, auth, body }) => submitFeedback(core, auth.accountId, body),
  }),
  defineRoute({
    operationId: "listFeedback",
    method: "get",
    path: "/v1/feedback",
    summary: "List your feedback reports",
    description: "Your own reports, newest first, optionally filtered by `category` and `status`.",
    tags,
    auth: "api_key",
    query: ListFeedbackQuery,
    response: { status: 200, description: "A page of your reports", schema: listOf(Feedback).meta({ id: "FeedbackList" }) },
    handler: ({ core, auth, query }) => listFeedback(core, auth.accountId, query),
  }),
];
