import { z } from "zod";
import { httpUrl } from "./values.js";

/** The server's settings, each with its documentation (docs/configuration.md is generated from them). */
export const serverSettings = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8080).meta({ description: "Port to listen on (`0` picks a free one)." }),
    HOST: z.string().min(1).default("127.0.0.1").meta({ description: "Address to listen on; `0.0.0.0` to accept connections from other machines." }),
    BASE_URL: httpUrl.optional().meta({
      defaultText: "`http://<HOST>:<PORT>`",
      description:
        "Public URL of the service, used in links and `push_context_url`, and the one browser origin (besides loopback) `/mcp` serves. Set it behind a proxy. It is also the OAuth issuer and `/mcp`'s resource: MCP clients signing in with OAuth must reach the service at exactly this URL. Required with `CARRIER=twilio`, and `https` (Twilio calls it). For `agentline mcp` (no HTTP of its own), the service on the same database; unset, events' links are `null`.",
    }),
    TRUST_PROXY: z.string().min(1).optional().meta({
      description: "express `trust proxy`: `true`, a hop count, or addresses (`loopback`, `10.0.0.0/8`). Needed for per-IP limits behind a proxy.",
    }),
    REQUEST_DEADLINE_MS: z.coerce.number().int().min(100).max(600_000).default(10_000).meta({
      description:
        "How long a request may take (a long poll adds its wait); past it the answer is 503 `service_unavailable` with `Retry-After` and its transaction is rolled back. On PostgreSQL also every statement's `statement_timeout`.",
    }),
    SECRET_KEY: z.string().min(32, "must be at least 32 characters").optional().meta({
      secret: true,
      defaultText: "generated",
      description:
        "Server secret (at least 32 characters) behind OTP peppers, push tokens and payment challenges. Unset: generated on first start and kept in the database.",
    }),
    METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional().meta({
      secret: true,
      description:
        "The Bearer token `GET /metrics` (Prometheus text format) asks of a scraper (at least 16 characters). Unset: `/metrics` answers loopback clients only (403 to others).",
    }),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info").meta({
      description:
        "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Logs are JSON lines on stdout (on stderr for `agentline mcp`, whose stdout is the protocol's); a reader that stops reading never holds the service (lines beyond 4 MiB waiting are dropped and counted). `debug` also prints the stack of a failed start.",
    }),
  })
  .meta({ title: "Server", description: "Where the service listens, how it is reached, and what it keeps secret and logs." });

export type ServerSettings = z.output<typeof serverSettings>;

/** The server's part of Config. */
export function serverConfig(e: ServerSettings) {
  return {
    port: e.PORT,
    host: e.HOST,
    /** Public base URL, no trailing slash. Unset: derived from the listening address. */
    baseUrl: e.BASE_URL?.replace(/\/+$/, ""),
    /** express "trust proxy" setting: false, true, a hop count, or a list of addresses. */
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    requestDeadlineMs: e.REQUEST_DEADLINE_MS,
    secretKey: e.SECRET_KEY,
    metricsToken: e.METRICS_TOKEN,
    logLevel: e.LOG_LEVEL,
  };
}

function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === "false" || value === "0") return false;
  if (value === "true") return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
