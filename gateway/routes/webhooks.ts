import { deletedOf, listOf } from "../../core/schemas/common.js";
import {
  AgentIdQuery,
  DeliveryAttempt,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  SetWebhookBody,
  SetWebhookResult,
  Webhook,
  WebhookTestResult,
} from "../../core/webhooks/schemas.js";
import { deleteWebhook, listDeliveryAttempts, listWebhooks, setWebhook, testWebhook } from "../../core/webhooks/webhooks.js";
import { defineRoute, Reply } from "../http/route.js";

const tags = ["Webhooks"];

export const webhookRoutes = [
  defineRoute({
    operationId: "listWebhooks",
    method: "get",
    path: "/v1/webhooks",
    summary: "List webhooks",
    description: "Secrets are masked.",
    tags,
    auth: "api_key",
    query: ListWebhooksQuery,
    response: { status: 200, description: "A page of webhooks", schema: listOf(Webhook).meta({ id: "WebhookList" }) },
    errors: [404],
    handler: ({ core, auth, query }) => listWebhooks(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "setWebhook",
    method: "post",
    path: "/v1/webhooks",
    summary: "Create or replace the agent's webhook",
    description:
      "An agent has one webhook; posting again replaces it (200) and keeps its secret unless `secret` or `rotate_secret: true` is sent. " +
      "The response carries the full `secret` when it was set by this request (`secret_changed: true`), shown once.",
    tags,
    auth: "api_key",
    idempotencyRefused: "its answer can carry a secret shown once, which the service does not keep in the clear",
    body: SetWebhookBody,
    response: { status: 201, description: "Created", schema: SetWebhookResult },
    otherResponses: [{ status: 200, description: "Replaced", schema: SetWebhookResult }],
    errors: [404],
    handler: async ({ core, auth, body }) => {
      const { webhook, created } = await setWebhook(core, auth.accountId, body);
      return new Reply(created ? 201 : 200, webhook);
    },
  }),
  defineRoute({
    operationId: "deleteWebhook",
    method: "delete",
    path: "/v1/webhooks",
    summary: "Remove the agent's webhook",
    description: "Later events wait in the mailbox (or go to the relay).",
    tags,
    auth: "api_key",
    query: AgentIdQuery,
    response: { status: 200, description: "Removed", schema: deletedOf("agent_id").meta({ id: "DeletedWebhook" }) },
    errors: [404],
    handler: ({ core, auth, query }) => deleteWebhook(core, auth.accountId, query.agent_id),
  }),
  defineRoute({
    operationId: "testWebhook",
    method: "post",
    path: "/v1/webhooks/test",
    summary: "Send a signed webhook.test",
    description: "Goes through the real pipeline; the answer reports the first attempt. 404 when the agent has no webhook.",
    tags,
    auth: "api_key",
    query: AgentIdQuery,
    response: { status: 200, description: "The first attempt", schema: WebhookTestResult },
    errors: [404],
    handler: ({ core, auth, query }) => testWebhook(core, auth.accountId, query.agent_id),
  }),
  defineRoute({
    operationId: "listWebhookDeliveries",
    method: "get",
    path: "/v1/webhooks/deliveries",
    summary: "List delivery attempts",
    description: "Every attempt at the agent's webhook, newest first, with status, latency and error.",
    tags,
    auth: "api_key",
    query: ListDeliveriesQuery,
    response: { status: 200, description: "A page of attempts", schema: listOf(DeliveryAttempt).meta({ id: "DeliveryAttemptList" }) },
    errors: [404],
    handler: ({ core, auth, query }) => listDeliveryAttempts(core, auth.accountId, query),
  }),
];
