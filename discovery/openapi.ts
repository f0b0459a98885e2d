import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { WEBHOOK_MESSAGES } from "../core/webhooks/protocol2-schemas.js";
import type { AuthPolicy, Operation, ResponseSpec } from "./operation.js";
import { Problem } from "./problem.js";

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: "Malformed JSON or a request that cannot be carried out",
  401: "Missing, invalid or revoked credentials",
  402: "Payment required or insufficient balance",
  404: "No such resource on this account",
  409: "Conflict with the current state",
  410: "Gone",
  413: "Body larger than 1 MiB",
  415: "Body is not JSON",
  422: "Validation failed; `errors` lists each offending field",
  429: "Rate limited; see Retry-After",
  503: "A dependency is unavailable",
};

const SECURITY: Record<AuthPolicy, RouteConfig["security"]> = {
  none: undefined,
  api_key: [{ apiKey: [] }],
  api_key_or_push_token: [{ apiKey: [] }, { pushToken: [] }],
  api_key_or_agent_token: [{ apiKey: [] }, { agentToken: [] }],
  agent_token_or_payment: [{ agentToken: [] }, {}],
  payment: [{}, { apiKey: [] }],
};

/** The statuses an operation's problems can have, from what it declares and what it implies. */
const IdempotencyKey = z.string().min(1).max(255).meta({
  description: "Makes the request safe to retry: the same key with the same request returns the first answer (24 hours); with another request, 409.",
});

export function problemStatuses(op: Operation): number[] {
  const statuses = new Set(op.errors ?? []);
  if (op.idempotent) statuses.add(409);
  if (op.auth !== "none") statuses.add(401);
  if (op.price) statuses.add(402);
  if (op.params) statuses.add(404);
  if (op.query) statuses.add(422);
  if (op.body) [400, 413, 415, 422].forEach((s) => statuses.add(s));
  return [...statuses].sort();
}

function toResponse(spec: ResponseSpec) {
  return {
    description: spec.description,
    ...(spec.schema ? { content: { [spec.contentType ?? "application/json"]: { schema: spec.schema } } } : {}),
  };
}

function toRouteConfig(op: Operation, extensions: Record<string, unknown> | undefined): RouteConfig {
  const problem = { "application/problem+json": { schema: Problem } };
  const responses: RouteConfig["responses"] = {};
  for (const spec of [op.response, ...(op.otherResponses ?? [])]) responses[spec.status] = toResponse(spec);
  if (op.idempotent) {
    responses[op.response.status] = {
      ...toResponse(op.response),
      headers: { "Idempotent-Replayed": { description: "true when this is the stored answer to an earlier request with the same Idempotency-Key", schema: { type: "string" } } },
    };
  }
  for (const status of problemStatuses(op)) {
    responses[status] = { description: PROBLEM_DESCRIPTIONS[status] ?? "Problem", content: problem };
  }
  responses.default = { description: "Unexpected error (500): only the request id is given", content: problem };
  return {
    ...op.extensions,
    ...extensions,
    method: op.method,
    path: op.path,
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: op.tags,
    security: SECURITY[op.auth],
    request: {
      params: op.params,
      query: op.query,
      headers: op.idempotent ? z.object({ "Idempotency-Key": IdempotencyKey.optional() }) : undefined,
      body: op.body ? { required: op.bodyRequired !== false, content: { "application/json": { schema: op.body } } } : undefined,
    },
    responses,
  };
}

/** The OpenAPI 3.1 document of the given operations, generated from the schemas the routes validate with. */
export function buildOpenApiDocument(
  operations: Operation[],
  info: { baseUrl: string; version: string },
  /** Extra members for an operation (MPP's x-payment-info on paid ones). */
  extensionsFor: (op: Operation) => Record<string, unknown> | undefined = () => undefined,
) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "An API key, `sk_...`, from POST /v1/auth/verify or POST /v1/auth/keys.",
  });
  registry.registerComponent("securitySchemes", "pushToken", {
    type: "http",
    scheme: "bearer",
    description: "The `push_token` (`pt_...`) of a call.utterance event; good for that call only, until it ends.",
  });
  registry.registerComponent("securitySchemes", "agentToken", {
    type: "http",
    scheme: "bearer",
    description: "A no-signup wallet's `agent_token` (`at_...`) from the top-up route.",
  });
  for (const op of operations) registry.registerPath(toRouteConfig(op, extensionsFor(op)));
  // What the service POSTs to a webhook: the receiver answers 2xx quickly (202 for protocol 2).
  for (const message of WEBHOOK_MESSAGES) {
    registry.registerWebhook({
      method: "post",
      path: message.name,
      summary: message.summary,
      description:
        "Headers: the signature header (hex HMAC-SHA256 of the raw body with the secret), X-Service-Event (the type), X-Service-Event-Id, " +
        "X-Service-Delivery-Attempt, and Standard Webhooks' webhook-id, webhook-timestamp and webhook-signature.",
      request: { body: { content: { "application/json": { schema: message.schema } } } },
      responses: { 202: { description: "Accepted; reply only through the context endpoint" }, 200: { description: "Any 2xx is success" } },
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "agentline",
      version: info.version,
      description: "A phone line for software agents: numbers, calls, live caller turns, texts, and events over a relay WebSocket, signed webhooks or a polling mailbox.",
    },
    servers: [{ url: info.baseUrl }],
  });
}
