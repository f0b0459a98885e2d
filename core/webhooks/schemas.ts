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
    agent_id: z.string().min(1),
    url: z.string().min(1).max(2048).meta({ description: "https:// URL that receives the agent's events", example: "https://agent.example.com/hooks/agentline" }),
    secret: z
      .string()
      .regex(/^[\x21-\x7e]{16,256}$/, "must be 16 to 256 printable characters without spaces")
      .optional()
      .meta({ description: "HMAC signing secret; generated (whsec_...) when omitted" }),
    signature_header: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/, "must be an HTTP header name")
      .refine((h) => !RESERVED_HEADERS.test(h), "is a header the service sets itself")
      .default("X-Webhook-Signature")
      .meta({ description: "Header carrying the hex HMAC-SHA256 of the raw body; X-Hub-Signature-256 gives GitHub's name" }),
    protocol: z.enum(PROTOCOLS).default("service-relay/1"),
    capabilities: z
      .array(z.enum(CAPABILITIES))
      .max(CAPABILITIES.length)
      .refine((c) => new Set(c).size === c.length, "must not repeat a capability")
      .default([])
      .meta({ description: "service-relay/2 only" }),
  });

const protocol2Only = (b: { protocol: string; capabilities: string[] }) => b.protocol === "service-relay/2" || b.capabilities.length === 0;
const protocol2OnlyIssue = { path: ["capabilities"], message: "apply to protocol service-relay/2 only" };

export const SetWebhookBody = WebhookFields.refine(protocol2Only, protocol2OnlyIssue).meta({ id: "SetWebhookRequest" });
export type SetWebhookBody = z.infer<typeof SetWebhookBody>;

/** The same, on the no-signup route: the webhook is the wallet's agent's. */
export const SetWalletWebhookBody = WebhookFields.omit({ agent_id: true }).refine(protocol2Only, protocol2OnlyIssue).meta({ id: "SetWalletWebhookRequest" });

export const AgentIdQuery = z.strictObject({ agent_id: z.string().min(1) });

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
