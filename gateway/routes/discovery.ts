import { z } from "zod";
import { serviceVersion } from "../../core/db/paths.js";
import { AppError, ERROR_CODES, type ErrorCode } from "../../core/errors.js";
import { checkHealth, Health } from "../../discovery/health.js";
import { buildOpenApiDocument } from "../../discovery/openapi.js";
import type { Operation } from "../../discovery/operation.js";
import { buildServiceDocument, ServiceDocument } from "../../discovery/service-document.js";
import { publicBaseUrl } from "../http/problem.js";
import { defineRoute, Reply } from "../http/route.js";

const tags = ["Discovery"];

const ProblemType = z
  .object({ code: z.string(), status: z.number().int(), title: z.string(), description: z.string() })
  .meta({ id: "ProblemType" });

/** The discovery routes; `operations` is every route the app mounts, for the OpenAPI document. */
export function discoveryRoutes(operations: () => Operation[]) {
  const openApiByBase = new Map<string, unknown>();
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
        const health = await checkHealth(core.database, serviceVersion);
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
      handler: async ({ req }) => {
        const base = publicBaseUrl(req);
        if (!openApiByBase.has(base)) openApiByBase.set(base, buildOpenApiDocument(operations(), { baseUrl: base, version: serviceVersion }));
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
          agentIdEnabled: false,
          transports: ["relay", "webhook", "mailbox"],
        }),
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
