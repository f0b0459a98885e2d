import { z } from "zod";
import { Pagination, Timestamp } from "../schemas/common.js";

export const PROTOCOLS = ["service-relay/1", "service-relay/2"] as const;
export const CAPABILITIES = ["supports_amend", "supports_cancel", "briefing", "streams_progress"] as const;
export type Capability = (typeof CAPABILITIES)[number];

// Headers the service sets itself; a signature header may not take their names.
const RESERVED_HEADERS = /^(content-type|content-length|host|user-agent|connection|transfer-encoding|webhook-.*|x-service-.*)$/i;

export const Webhook = z
  .object({
    webhook_id: z.string(),
    agent_id: z.string(),
    url: z.string(),
    secret: z.string().meta({ description: "In full only in the response that created it; masked (`whsec_…abcd`) afterwards." }),
    signature_header: z.string(),
    protocol: z.enum(PROTOCOLS),
    capabilities: z.array(z.enum(CAPABILITIES)),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Webhook" });
export type Webhook = z.infer<typeof Webhook>;

const WebhookFields = z.strictObject({
  agent_id: z.string().min(1).meta({ description: "The agent whose events the webhook receives" }),
  url: z.string().min(1).max(2048).meta({ description: "https:// URL that receives the agent's events", example: "https://agent.example.com/hooks/agentline" }),
  secret: z
    .string()
    .regex(/^[\x21-\x7e]{16,256}$/, "must be 16 to 256 printable characters without spaces")
    .optional()
    .meta({ description: "HMAC signing secret. Omitted: a new webhook gets a generated one (whsec_...), a replaced one keeps its own" }),
  rotate_secret: z
    .boolean()
    .default(false)
    .meta({ description: "true: generate a new secret for a webhook being replaced (the old one stops verifying at once). Not with `secret`" }),
  signature_header: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, "must be an HTTP header name")
    .refine((h) => !RESERVED_HEADERS.test(h), "is a header the service sets itself")
    .default("X-Webhook-Signature")
    .meta({ description: "Header carrying the hex HMAC-SHA256 of the raw body; X-Hub-Signature-256 gives GitHub's name and format (sha256=<hex>)" }),
  protocol: z.enum(PROTOCOLS).default("service-relay/1").meta({
    description:
      "How events are posted. service-relay/1 (default): each event as it is. service-relay/2: a live call as a task with steps, for agent runtimes that can change or cancel an answer",
  }),
  capabilities: z
    .array(z.enum(CAPABILITIES))
    .max(CAPABILITIES.length)
    .refine((c) => new Set(c).size === c.length, "must not repeat a capability")
    .default([])
    .meta({
      description:
        "What the receiver can do, service-relay/2 only: supports_amend (more words from the caller amend the open task), supports_cancel (told when the caller interrupts), briefing (who is calling, with recent calls and texts, at the start), streams_progress (interim lines)",
      uniqueItems: true,
    }),
});

type WebhookInput = { protocol: string; capabilities: string[]; secret?: string | undefined; rotate_secret: boolean };
const protocol2Only = (b: WebhookInput) => b.protocol === "service-relay/2" || b.capabilities.length === 0;
const protocol2OnlyIssue = { path: ["capabilities"], message: "apply to protocol service-relay/2 only" };
const secretOrRotation = (b: WebhookInput) => !(b.secret !== undefined && b.rotate_secret);
const secretOrRotationIssue = { path: ["rotate_secret"], message: "cannot be true when a secret is given: send one or the other" };

/**
 * The rules between fields, as JSON Schema says them (OpenAPI 3.1): capabilities need protocol
 * service-relay/2, and a secret is not sent with rotate_secret: true.
 */
const BETWEEN_FIELDS = {
  allOf: [
    { anyOf: [{ required: ["protocol"], properties: { protocol: { const: "service-relay/2" } } }, { properties: { capabilities: { maxItems: 0 } } }] },
    { not: { required: ["secret", "rotate_secret"], properties: { secret: { type: "string" }, rotate_secret: { const: true } } } },
  ],
};

export const SetWebhookBody = WebhookFields.refine(protocol2Only, protocol2OnlyIssue)
  .refine(secretOrRotation, secretOrRotationIssue)
  .meta({ id: "SetWebhookRequest", ...BETWEEN_FIELDS });
export type SetWebhookBody = z.infer<typeof SetWebhookBody>;

/** The same, on the no-signup route: the webhook is the wallet's agent's. */
export const SetWalletWebhookBody = WebhookFields.omit({ agent_id: true })
  .refine(protocol2Only, protocol2OnlyIssue)
  .refine(secretOrRotation, secretOrRotationIssue)
  .meta({ id: "SetWalletWebhookRequest", ...BETWEEN_FIELDS });

/** What setting a webhook answers: the webhook, and whether its secret changed. */
export const SetWebhookResult = Webhook.extend({
  secret: z.string().meta({ description: "In full when it was just created or changed; masked (`whsec_…abcd`) when the webhook kept its secret." }),
  secret_changed: z
    .boolean()
    .meta({ description: "True when this request set a new secret (creation, a given secret, or rotate_secret): receivers must use the new one." }),
}).meta({ id: "SetWebhookResult" });
export type SetWebhookResult = z.infer<typeof SetWebhookResult>;

export const AgentIdQuery = z.strictObject({ agent_id: z.string().min(1).meta({ description: "The agent whose webhook it is (agt_...)" }) });

export const ListWebhooksQuery = Pagination.extend({ agent_id: z.string().optional() });

export const WebhookTestResult = z
  .object({
    event_id: z.string(),
    delivered: z.boolean().meta({ description: "True when the first attempt got a 2xx" }),
    status_code: z.number().int().nullable(),
    latency_ms: z.number().int().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: "WebhookTestResult", description: "The first attempt at delivering webhook.test (retries follow the usual schedule)" });

export const DeliveryAttempt = z
  .object({
    attempt_id: z.number().int(),
    delivery_id: z.string(),
    message_id: z.string().meta({ description: "event_id, or the id of a protocol-2 message" }),
    message_type: z.string(),
    url: z.string(),
    attempt: z.number().int().meta({ description: "1 for the first try" }),
    status_code: z.number().int().nullable(),
    latency_ms: z.number().int(),
    error: z.string().nullable(),
    outcome: z.enum(["succeeded", "failed"]),
    created_at: Timestamp,
  })
  .meta({ id: "DeliveryAttempt" });

export const ListDeliveriesQuery = Pagination.extend({ agent_id: z.string().min(1) });
