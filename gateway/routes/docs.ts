import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { apiReference } from "@scalar/express-api-reference";
import type { RequestHandler } from "express";
import { z } from "zod";
import { publicBaseUrl } from "../http/problem.js";
import { defineRoute, Reply } from "../http/route.js";

const tags = ["Discovery"];

const ServiceRoot = z
  .object({
    name: z.string(),
    description: z.string(),
    docs: z.string().meta({ description: "The API reference, for people" }),
    openapi: z.string().meta({ description: "The live contract, for machines" }),
    service: z.string().meta({ description: "The service discovery document" }),
    health: z.string(),
    mcp: z.string().meta({ description: "The MCP server (Streamable HTTP)" }),
    oauth_protected_resource: z.string().meta({ description: "How MCP clients sign in to /mcp with OAuth (RFC 9728)" }),
    oauth_authorization_server: z.string().meta({ description: "This service's OAuth authorization server metadata (RFC 8414)" }),
  })
  .meta({ id: "ServiceRoot" });

// Scalar's page, told to load its bundle from this service instead of a CDN and to use the
// system fonts instead of fetching its own: the page works with no internet at all.
const referencePage = apiReference({
  url: "/openapi.json",
  cdn: "/docs/scalar.js",
  pageTitle: "agentline API reference",
  withDefaultFonts: false,
  showDeveloperTools: "never",
  hideClientButton: true,
  telemetry: false,
  // "Ask AI" searches Scalar's registry on the internet; the reference is of this service only.
  agent: { disabled: true },
}) as unknown as RequestHandler;

/** The standalone bundle of @scalar/api-reference (script and styles in one file), read once, gzipped once. */
let bundle: { raw: Buffer; gzip: Buffer } | undefined;
function scalarBundle() {
  if (!bundle) {
    const raw = readFileSync(fileURLToPath(import.meta.resolve("@scalar/api-reference/browser/standalone.js")));
    bundle = { raw, gzip: gzipSync(raw) };
  }
  return bundle;
}

/** `/`, the API reference at `/docs`, and the reference's script, served from the installed package. */
export const docsRoutes = [
  defineRoute({
    operationId: "getServiceRoot",
    method: "get",
    path: "/",
    summary: "Where to start",
    description: "Links to the API reference, the OpenAPI document and the service document. A browser (Accept: text/html) is sent to /docs.",
    tags,
    auth: "none",
    response: { status: 200, description: "The links", schema: ServiceRoot },
    otherResponses: [{ status: 302, description: "A browser is sent to the API reference at /docs" }],
    handler: async ({ req }) => {
      if (req.accepts(["json", "html"]) === "html") return new Reply(302, undefined, { Location: "/docs" });
      const base = publicBaseUrl(req);
      return {
        name: "agentline",
        description: "A phone line for software agents: numbers, calls, live caller turns, texts and events.",
        docs: `${base}/docs`,
        openapi: `${base}/openapi.json`,
        service: `${base}/.well-known/service.json`,
        health: `${base}/health`,
        mcp: `${base}/mcp`,
        oauth_protected_resource: `${base}/.well-known/oauth-protected-resource/mcp`,
        oauth_authorization_server: `${base}/.well-known/oauth-authorization-server`,
      };
    },
  }),
  defineRoute({
    operationId: "getApiReference",
    method: "get",
    path: "/docs",
    summary: "API reference",
    description: "Every operation of /openapi.json, to read and try, rendered by Scalar. Needs no internet: its script comes from this service.",
    tags,
    auth: "none",
    response: { status: 200, description: "The reference page", schema: z.string(), contentType: "text/html" },
    handler: async ({ req, res }) => {
      referencePage(req, res, () => undefined);
      return undefined;
    },
  }),
  defineRoute({
    operationId: "getApiReferenceScript",
    method: "get",
    path: "/docs/scalar.js",
    summary: "API reference script",
    description: "The script of the reference page (@scalar/api-reference's standalone bundle, styles included), served by this service rather than a CDN.",
    tags,
    auth: "none",
    response: { status: 200, description: "The script", schema: z.string(), contentType: "text/javascript" },
    handler: async ({ req }) => {
      const { raw, gzip } = scalarBundle();
      const headers = { "Cache-Control": "public, max-age=3600", Vary: "Accept-Encoding" };
      return req.acceptsEncodings("gzip", "identity") === "gzip"
        ? new Reply(200, gzip, { ...headers, "Content-Encoding": "gzip" })
        : new Reply(200, raw, headers);
    },
  }),
];
