import { z } from "zod";
import type { Core } from "../../core/context.js";
import { serviceVersion } from "../../core/db/paths.js";
import { AppError, ERROR_CODES, type ErrorCode } from "../../core/errors.js";
import { checkHealth, Health } from "../../discovery/health.js";
import { buildOpenApiDocument } from "../../discovery/openapi.js";
import type { Operation } from "../../discovery/operation.js";
import {
  AgentPaymentsDocument,
  buildAgentPaymentsDocument,
  buildX402Discovery,
  type PaidMcpTool,
  type PaidRoute,
  paymentInfo,
} from "../../discovery/payment-documents.js";
import { buildServiceDocument, ServiceDocument } from "../../discovery/service-document.js";
import type { PaymentSettings } from "../../payments/settings.js";
import { publicBaseUrl } from "../http/problem.js";
import { defineRoute, Reply } from "../http/route.js";

const tags = ["Discovery"];

const ProblemType = z.object({ code: z.string(), status: z.number().int(), title: z.string(), description: z.string() }).meta({ id: "ProblemType" });

/** The paid routes and the terms they are paid on, as plain data for the discovery documents. */
async function paidRoutes(core: Core, operations: Operation[]): Promise<{ terms: PaymentSettings; routes: PaidRoute[]; tools: PaidMcpTool[] }> {
  // Loaded when asked for: the payment settings pull in viem.
  const { paymentSettings } = await import("../../payments/settings.js");
  const terms = paymentSettings(core);
  const routes = operations
    .filter((op) => op.price && !(op.path === "/v1/billing/topup/x402/pay" && op.method === "get"))
    .map((op) => ({
      method: op.path === "/v1/billing/topup/x402/pay" ? "get|post" : op.method,
      path: op.path,
      summary: op.summary,
      fixedMicros: op.price!.fixed(core),
      variants: op.price!.variants?.(core),
      priceDescription: op.price!.description,
    }));
  // The paid MCP tools are those routes again (mcp/paid/catalogue.ts), at the same prices.
  const [{ paidCatalogue }, { listing }] = await Promise.all([import("../../mcp/paid/catalogue.js"), import("../../mcp/server.js")]);
  const tools = paidCatalogue(core).tools.map((tool) => ({
    tool: tool.name,
    description: `${tool.route.summary}.`,
    inputSchema: listing(tool).inputSchema,
    fixedMicros: tool.route.price!.fixed(core),
    variants: tool.route.price!.variants?.(core),
    priceDescription: tool.route.price!.description,
  }));
  return { terms, routes, tools };
}

/** The discovery routes; `operations` is every route the app mounts, for the OpenAPI document. */
export function discoveryRoutes(operations: () => Operation[]) {
  const openApiByBase = new Map<string, unknown>();
  // The terms and prices come from the configuration, which does not change while the service runs.
  let paidCache: ReturnType<typeof paidRoutes> | undefined;
  const paidOnce = (core: Core) => {
    if (!paidCache) {
      paidCache = paidRoutes(core, operations());
      paidCache.catch(() => (paidCache = undefined));
    }
    return paidCache;
  };
  return [
    defineRoute({
      operationId: "getHealth",
      method: "get",
      path: "/health",
      summary: "Health check",
      description: "200 when the service and its database answer; 503 when the database does not.",
      tags,
      auth: "none",
      response: { status: 200, description: "Healthy", schema: Health },
      otherResponses: [{ status: 503, description: "The database does not answer", schema: Health }],
      handler: async ({ core }) => {
        const health = await checkHealth(core.dbHandle, serviceVersion);
        return health.status === "ok" ? health : new Reply(503, health, { "Retry-After": "5" });
      },
    }),
    defineRoute({
      operationId: "getOpenApi",
      method: "get",
      path: "/openapi.json",
      summary: "This OpenAPI 3.1 document",
      tags,
      auth: "none",
      response: { status: 200, description: "The live contract", schema: z.record(z.string(), z.unknown()) },
      handler: async ({ core, req }) => {
        const base = publicBaseUrl(req);
        if (!openApiByBase.has(base)) {
          const { terms, routes } = await paidOnce(core);
          const extensions = (op: Operation) => {
            const paid = routes.find((r) => r.path === op.path && r.method.split("|").includes(op.method));
            return paid ? { "x-payment-info": paymentInfo(terms, paid) } : undefined;
          };
          openApiByBase.set(base, buildOpenApiDocument(operations(), { baseUrl: base, version: serviceVersion }, extensions));
        }
        return openApiByBase.get(base);
      },
    }),
    defineRoute({
      operationId: "getServiceDocument",
      method: "get",
      path: "/.well-known/service.json",
      summary: "Service discovery document",
      tags,
      auth: "none",
      response: { status: 200, description: "Where everything is", schema: ServiceDocument },
      handler: async ({ core, req }) =>
        buildServiceDocument(publicBaseUrl(req), {
          version: serviceVersion,
          carrier: core.config.carrier,
          agentIdEnabled: core.config.agentId !== undefined,
          payments: true,
          transports: ["relay", "webhook", "mailbox"],
          limits: core.config.limits,
          paidMcpTools: (await paidOnce(core)).tools,
        }),
    }),
    defineRoute({
      operationId: "getAgentPayments",
      method: "get",
      path: "/.well-known/agent-payments.json",
      summary: "Payment discovery document",
      description:
        "How a wallet pays this service with no signup: protocols, network, asset, payee, every paid route with its price, the top-up, the agent_token.",
      tags,
      auth: "none",
      response: { status: 200, description: "The payment terms", schema: AgentPaymentsDocument },
      handler: async ({ core, req }) => {
        const { terms, routes } = await paidOnce(core);
        return buildAgentPaymentsDocument(publicBaseUrl(req), terms, routes);
      },
    }),
    defineRoute({
      operationId: "getX402Discovery",
      method: "get",
      path: "/.well-known/x402",
      summary: "x402 resource list",
      description: "The paid resources with their x402 payment requirements, for x402 indexers. The 402 challenge stays authoritative.",
      tags,
      auth: "none",
      response: { status: 200, description: "The paid resources", schema: z.record(z.string(), z.unknown()) },
      handler: async ({ core, req }) => {
        const { terms, routes, tools } = await paidOnce(core);
        return buildX402Discovery(publicBaseUrl(req), terms, routes, tools);
      },
    }),
    defineRoute({
      operationId: "getProblemType",
      method: "get",
      path: "/problems/{code}",
      summary: "Describe a problem type",
      description: "The `type` URI of every problem response points here.",
      tags,
      auth: "none",
      params: z.object({ code: z.string() }),
      response: { status: 200, description: "The problem type", schema: ProblemType },
      handler: async ({ params }) => {
        if (!Object.hasOwn(ERROR_CODES, params.code)) throw new AppError("not_found", `No problem type ${JSON.stringify(params.code)}.`);
        const entry = ERROR_CODES[params.code as ErrorCode];
        return { code: params.code, status: entry.status, title: entry.title, description: entry.when };
      },
    }),
  ];
}
