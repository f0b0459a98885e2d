import { peekEvents, pollEvents } from "../../core/events/events.js";
import { EventBatch, PeekEventsQuery, PollEventsQuery } from "../../core/events/schemas.js";
import { issueRelayTicket, RelayTicket, RelayTicketBody } from "../../core/relay/tickets.js";
import { publicBaseUrl } from "../http/problem.js";
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

  defineRoute({
    operationId: "createRelayTicket",
    method: "post",
    path: "/v1/events/ws/ticket",
    summary: "Get a relay ticket",
    description:
      "A single-use ticket, good for 60 seconds, that opens the agent's relay WebSocket without an Authorization header: " +
      "`GET /v1/events/ws?agent_id=agt_...&ticket=rt_...` (the `url` in the answer). For browsers, Deno and built-in WebSockets, " +
      "which cannot set headers on an upgrade; a server can fetch the ticket with its key and hand only the ticket to the page. " +
      "Clients that can send headers may keep using `Authorization: Bearer sk_...` on the upgrade.",
    tags,
    auth: "api_key",
    body: RelayTicketBody,
    response: { status: 201, description: "The ticket and the relay URL it opens", schema: RelayTicket },
    errors: [404],
    handler: ({ core, auth, body, req }) => issueRelayTicket(core, { accountId: auth.accountId, credentialId: auth.keyId }, body, publicBaseUrl(req)),
  }),
];
