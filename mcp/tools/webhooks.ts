import { AppError } from "../../core/errors.js";
import { deletedOf } from "../../core/schemas/common.js";
import { AgentIdQuery, SetWebhookBody, SetWebhookResult, Webhook, WebhookTestResult } from "../../core/webhooks/schemas.js";
import { deleteWebhook, getWebhook, setWebhook, testWebhook } from "../../core/webhooks/webhooks.js";
import { defineTool } from "../tool.js";

export const webhookTools = [
  defineTool({
    name: "get_webhook",
    title: "Get an agent's webhook",
    description: "Reads the agent's webhook (its secret masked). An agent with a webhook gets its events posted there instead of through wait_for_event.",
    input: [AgentIdQuery],
    output: Webhook,
    hints: { readOnly: true },
    run: async ({ core, accountId }, args) => {
      const webhook = await getWebhook(core, accountId, args.agent_id);
      if (!webhook) throw new AppError("not_found", `Agent ${args.agent_id} has no webhook. set_webhook creates one.`);
      return webhook;
    },
  }),
  defineTool({
    name: "set_webhook",
    title: "Set an agent's webhook",
    description:
      "Creates or replaces the agent's webhook: every event of the agent is then POSTed, signed, to url (https); a new secret is shown in full " +
      "this once. " +
      "Only for agents served by a web server; an agent talking through these tools should use wait_for_event instead.",
    input: [SetWebhookBody],
    output: SetWebhookResult,
    hints: { idempotent: true },
    run: async ({ core, accountId }, args) => (await setWebhook(core, accountId, args)).webhook,
  }),
  defineTool({
    name: "delete_webhook",
    title: "Remove an agent's webhook",
    description:
      "Removes the agent's webhook; its later events wait for wait_for_event (or go to a relay socket, a WebSocket an agent program keeps open) instead.",
    input: [AgentIdQuery],
    output: deletedOf("agent_id"),
    hints: { destructive: true, idempotent: true },
    run: ({ core, accountId }, args) => deleteWebhook(core, accountId, args.agent_id),
  }),
  defineTool({
    name: "test_webhook",
    title: "Send a test event to a webhook",
    description: "Sends a signed webhook.test event to the agent's webhook and reports the first attempt: status code, latency, error.",
    input: [AgentIdQuery],
    output: WebhookTestResult,
    hints: { openWorld: true },
    run: ({ core, accountId }, args) => testWebhook(core, accountId, args.agent_id),
  }),
];
