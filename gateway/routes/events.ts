import { peekEvents, pollEvents } from "../../core/events/events.js";
import { EventBatch, PeekEventsQuery, PollEventsQuery } from "../../core/events/schemas.js";
import { defineRoute } from "../http/route.js";

const tags = ["Events"];

export const eventRoutes = [
  defineRoute({
    operationId: "pollEvents",
    consumes: true,
    method: "get",
    path: "/v1/events",
    summary: "Poll the mailbox",
    description: "Returns pending events, oldest first, and consumes them: each is returned once. Unsuitable for live caller turns; use the relay.",
    tags,
    auth: "api_key",
    query: PollEventsQuery,
    response: { status: 200, description: "The events, now consumed", schema: EventBatch },
    errors: [404],
    handler: ({ core, auth, query }) => pollEvents(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "peekEvents",
    method: "get",
    path: "/v1/events/peek",
    summary: "Preview the mailbox",
    description: "Pending events, oldest first, left pending. `event_type` filters the consuming poll only.",
    tags,
    auth: "api_key",
    query: PeekEventsQuery,
    response: { status: 200, description: "The pending events", schema: EventBatch },
    errors: [404],
    handler: ({ core, auth, query }) => peekEvents(core, auth.accountId, query),
  }),
];
