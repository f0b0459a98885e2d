import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { OAUTH_SCOPES } from "../core/oauth/scopes.js";
import { WEBHOOK_MESSAGES } from "../core/webhooks/protocol2-schemas.js";
import { RESPONSE_HEADERS, type ResponseHeaderName } from "./headers.js";
import { type AuthPolicy, type Operation, type ResponseSpec, takesIdempotencyKey } from "./operation.js";
import { Problem } from "./problem.js";

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: "Malformed JSON or a request that cannot be carried out",
  401: "Missing, invalid or revoked credentials, or a credential this route does not take",
  402: "Payment required or insufficient balance; both challenges are in the headers",
  403: "Forbidden",
  404: "No such resource on this account",
  406: "The Accept header names nothing this route answers with",
  409: "Conflict with the current state",
  410: "Gone",
  413: "Body larger than 1 MiB",
  415: "Body is not JSON",
  422: "Validation failed; `errors` lists each offending field and where it was (a query parameter the route does not define is one)",
  429: "Rate limited, or one of the account's limits reached (`limit` names it, as in /.well-known/service.json); see Retry-After",
  503: "A dependency is unavailable; see Retry-After",
};

// An empty list says "no credentials": every operation states its security (Redocly's security-defined).
const SECURITY: Record<AuthPolicy, RouteConfig["security"]> = {
  none: [],
  api_key: [{ apiKey: [] }],
  api_key_or_push_token: [{ apiKey: [] }, { pushToken: [] }],
  api_key_or_agent_token: [{ apiKey: [] }, { agentToken: [] }],
  agent_token_or_payment: [{ agentToken: [] }, {}],
  payment: [{}, { apiKey: [] }],
  mcp: [{ apiKey: [] }, { agentToken: [] }, { oauth: [] }],
};

const IdempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x21-\x7e]+$/)
  .meta({
    description:
      "Makes the request safe to retry: the same key with the same request returns the first answer (24 hours); with another request, 409. Not with a per-request payment.",
  });

/** The statuses an operation's problems can have, from what it declares and what it implies. */
export function problemStatuses(op: Operation): number[] {
  const statuses = new Set(op.errors ?? []);
  // Every route refuses a query parameter it does not define.
  statuses.add(422);
  if (takesIdempotencyKey(op)) statuses.add(409);
  // An authenticated request counts among its account's requests in flight (account_requests).
  if (op.auth !== "none") [401, 429].forEach((s) => statuses.add(s));
  if (op.price) statuses.add(402);
  if (op.params) statuses.add(404);
  if (op.body) [400, 413, 415].forEach((s) => statuses.add(s));
  return [...statuses].sort();
}

const ref = (name: ResponseHeaderName) => ({ $ref: `#/components/headers/${name}` });

/** The headers a response carries, by its status and what the operation does. */
function headersFor(op: Operation, status: number): Record<string, { $ref: string }> {
  const names: ResponseHeaderName[] = ["X-Request-Id"];
  const success = status < 300;
  if (status === 401) names.push("WWW-Authenticate");
  if (status === 402) names.push("PAYMENT-REQUIRED", "WWW-Authenticate");
  if (status === 429 || status === 503) names.push("Retry-After");
  // A payment's receipt comes with what it bought, and with a refusal after it was settled.
  if (op.price && (success || (status >= 400 && status < 500 && status !== 402)))
    names.push("PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE", "Payment-Receipt", "X-Payment-Test-Money");
  if (takesIdempotencyKey(op) && status < 500 && status !== 429) names.push("Idempotent-Replayed");
  if (op.consumes && success) names.push("Cache-Control");
  return Object.fromEntries(names.map((name) => [name, ref(name)]));
}

function toResponse(op: Operation, spec: ResponseSpec) {
  return {
    description: spec.description,
    headers: headersFor(op, spec.status),
    ...(spec.schema ? { content: { [spec.contentType ?? "application/json"]: { schema: spec.schema } } } : {}),
  };
}

function toRouteConfig(op: Operation, extensions: Record<string, unknown> | undefined): RouteConfig {
  const problem = { "application/problem+json": { schema: Problem } };
  const responses: RouteConfig["responses"] = {};
  for (const spec of [op.response, ...(op.otherResponses ?? [])]) responses[spec.status] = toResponse(op, spec);
  for (const status of problemStatuses(op)) {
    // A status an operation also answers in its own terms (MCP's JSON-RPC errors) keeps both media types.
    const own = responses[status] as { description: string; content?: object } | undefined;
    responses[status] = {
      description: own?.description ?? PROBLEM_DESCRIPTIONS[status] ?? "Problem",
      headers: headersFor(op, status),
      content: { ...own?.content, ...problem },
    };
  }
  responses.default = { description: "Unexpected error (500): only the request id is given", headers: headersFor(op, 500), content: problem };
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
      headers: takesIdempotencyKey(op) ? z.object({ "Idempotency-Key": IdempotencyKey.optional() }) : undefined,
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
    description:
      "An `agent_token` (`at_...`): a no-signup wallet's, from the top-up route, or one minted with POST /v1/auth/agent-tokens. Revocable; listed by GET /v1/auth/agent-tokens.",
  });
  registry.registerComponent("securitySchemes", "oauth", {
    type: "oauth2",
    description:
      "For MCP clients, on /mcp only: this service is its own OAuth 2.1 authorization server (authorization code with PKCE S256; " +
      "dynamic registration or a client ID metadata document). Its metadata: /.well-known/oauth-authorization-server; the resource's: /.well-known/oauth-protected-resource/mcp.",
    flows: {
      authorizationCode: {
        authorizationUrl: `${info.baseUrl}/oauth/authorize`,
        tokenUrl: `${info.baseUrl}/oauth/token`,
        refreshUrl: `${info.baseUrl}/oauth/token`,
        scopes: { ...OAUTH_SCOPES },
      },
    },
  });
  for (const [name, header] of Object.entries(RESPONSE_HEADERS)) registry.registerComponent("headers", name, { ...header });
  for (const op of operations) registry.registerPath(toRouteConfig(op, extensionsFor(op)));
  // What the service POSTs to a webhook: the receiver answers 2xx quickly (202 for protocol 2).
  for (const message of WEBHOOK_MESSAGES) {
    registry.registerWebhook({
      method: "post",
      path: message.name,
      operationId: `webhook_${message.name.replace(/\W+/g, "_")}`,
      summary: message.summary,
      description:
        "Headers: the signature header (hex HMAC-SHA256 of the raw body with the secret; `sha256=<hex>` under X-Hub-Signature-256), X-Service-Event (the type), " +
        "X-Service-Event-Id, X-Service-Delivery-Attempt, and Standard Webhooks' webhook-id, webhook-timestamp and webhook-signature.",
      security: [],
      request: { body: { content: { "application/json": { schema: message.schema } } } },
      responses: {
        202: { description: "Accepted; reply only through the context endpoint" },
        200: { description: "Any 2xx is success" },
        400: { description: "Any other answer is a failure: the delivery is retried" },
      },
    });
  }
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "agentline",
      version: info.version,
      description:
        "A phone line for software agents: numbers, calls, live caller turns, texts, and events over a relay WebSocket, signed webhooks or a polling mailbox.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: info.baseUrl }],
  });
  return moveRequestBodies(document);
}

type Document = ReturnType<OpenApiGeneratorV31["generateDocument"]>;
type Ref = { $ref: string };

/**
 * Request bodies go to `components/requestBodies`: a field with a default is optional to send,
 * and code generators (openapi-typescript with its default settings) read `default` as "always
 * present" everywhere except under a request body. A schema that a response also uses stays where
 * it is.
 */
function moveRequestBodies(document: Document): Document {
  const schemas = document.components?.schemas ?? {};
  const bodies: Array<{ body: { required?: boolean; content: Record<string, { schema: Ref }> }; name: string }> = [];
  for (const item of Object.values(document.paths ?? {})) {
    for (const op of Object.values(item as Record<string, { requestBody?: unknown }>)) {
      const body = op?.requestBody as { required?: boolean; content: Record<string, { schema: Ref }> } | undefined;
      const ref = body?.content?.["application/json"]?.schema?.$ref;
      if (ref?.startsWith("#/components/schemas/")) bodies.push({ body: body!, name: ref.slice("#/components/schemas/".length) });
    }
  }
  const uses = new Map<string, number>();
  JSON.stringify(document, (key, value) => {
    if (key === "$ref" && typeof value === "string") uses.set(value, (uses.get(value) ?? 0) + 1);
    return value;
  });
  const requestBodies: Record<string, unknown> = {};
  for (const name of new Set(bodies.map((b) => b.name))) {
    const asBody = bodies.filter((b) => b.name === name);
    if (uses.get(`#/components/schemas/${name}`) !== asBody.length) continue;
    requestBodies[name] = { required: asBody[0]!.body.required ?? false, content: { "application/json": { schema: schemas[name] } } };
    delete schemas[name];
    for (const { body } of asBody) {
      for (const key of Object.keys(body)) delete (body as Record<string, unknown>)[key];
      (body as unknown as Ref).$ref = `#/components/requestBodies/${name}`;
    }
  }
  document.components = { ...document.components, requestBodies: { ...document.components?.requestBodies, ...requestBodies } as never };
  return document;
}
