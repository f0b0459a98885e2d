import { z } from "zod";

/** A boolean switch as environments write them: 1/0, true/false, yes/no, on/off. */
const flag = z
  .enum(["1", "0", "true", "false", "yes", "no", "on", "off"], {
    error: "expected one of 1, 0, true, false, yes, no, on, off",
  })
  .transform((v) => ["1", "true", "yes", "on"].includes(v));

/** A duration such as 250ms, 5s, 30m, 2h. */
const DURATION = /^(\d+)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/** A comma-separated list of durations, e.g. "5s,5m,30m": the waits before each retry. */
const schedule = z
  .string()
  .refine((v) => v.split(",").every((part) => DURATION.test(part.trim())), "expected durations such as 5s,5m,30m (units ms, s, m, h)")
  .transform((v) =>
    v.split(",").map((part) => {
      const [, amount, unit] = DURATION.exec(part.trim())!;
      return Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
    }),
  );

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x-prefixed 20-byte address");

/** A decimal USD amount as the API and the environment take it: up to 9 whole digits and 6 decimals. */
export const USD_AMOUNT = /^\d{1,9}(\.\d{1,6})?$/;

const usd = z.string().regex(USD_AMOUNT, "expected a dollar amount such as 5.00 (at most 6 decimals)");

/** Micro-USD from a decimal USD string (exact: no floating point). */
export function usdToMicros(value: string): number {
  const [whole, fraction = ""] = value.split(".");
  return Number(whole) * 1_000_000 + Number(fraction.padEnd(6, "0"));
}

/** True for a loopback host: 127.0.0.0/8, ::1 or localhost (URL hostnames keep IPv6 brackets). */
function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** An OpenID Connect issuer: https, or http on loopback only (tests and local development). */
const issuerUrl = z
  .url({ protocol: /^https?$/ })
  .refine((v) => {
    const url = new URL(v);
    return url.protocol === "https:" || isLoopbackHost(url.hostname);
  }, "must be https:// (http:// is accepted only on loopback)")
  .refine((v) => !new URL(v).search && !new URL(v).hash, "an issuer has no query or fragment");

/**
 * Whether postgres.js can read a connection URL: it takes the first of a comma-separated host list
 * and hands the rest to WHATWG's URL parser, which throws a bare "Invalid URL" (naming no setting)
 * on a port out of range or an unencoded character in the password.
 */
function parsesAsPostgresUrl(value: string): boolean {
  const authority = value.slice(value.indexOf("://") + 3).split(/[?/]/)[0]!;
  let hosts: string;
  try {
    hosts = decodeURIComponent(authority.slice(authority.indexOf("@") + 1));
  } catch {
    return false;
  }
  return URL.canParse(value.replace(hosts, hosts.split(",")[0]!));
}

/** The advice for a URL that does not parse: the usual causes, none of which echo the value. */
const UNPARSABLE_URL = "is not a valid URL: check the host and port, and percent-encode special characters in the user name and password";

const perMinute = usd.refine((v) => usdToMicros(v) % 60 === 0, "must come to whole micro-dollars per second (a multiple of 0.00006)");

/** Every environment variable the service reads (DESIGN §10). Empty strings count as unset. */
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default("127.0.0.1"),
  BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "expected a postgres:// or postgresql:// URL")
    .refine(parsesAsPostgresUrl, UNPARSABLE_URL)
    .optional(),
  DATA_DIR: z.string().min(1).default("./.data"),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, "expected an smtp:// or smtps:// URL")
    .refine((v) => URL.canParse(v), UNPARSABLE_URL)
    .optional(),
  MAIL_FROM: z.string().min(3).default("agentline <no-reply@agentline.localhost>"),
  CARRIER: z.enum(["sandbox", "twilio"], { error: "expected sandbox or twilio" }).default("sandbox"),
  // The Twilio carrier (DESIGN §6a). The auth token is needed even with an API key: it is what
  // Twilio signs its webhooks with.
  TWILIO_ACCOUNT_SID: z.string().regex(/^AC[0-9a-fA-F]{32}$/, "expected AC followed by 32 hexadecimal digits").optional(),
  TWILIO_AUTH_TOKEN: z.string().regex(/^[0-9a-fA-F]{32}$/, "expected 32 hexadecimal digits (the account's auth token)").optional(),
  TWILIO_API_KEY_SID: z.string().regex(/^SK[0-9a-fA-F]{32}$/, "expected SK followed by 32 hexadecimal digits").optional(),
  TWILIO_API_KEY_SECRET: z.string().regex(/^[0-9A-Za-z]{16,64}$/, "expected the API key's secret (16 to 64 letters and digits)").optional(),
  TWILIO_API_URL: z.url({ protocol: /^https?$/ }).default("https://api.twilio.com"),
  TWILIO_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(8_000),
  ALLOW_PRIVATE_WEBHOOKS: flag.default(false),
  SECRET_KEY: z.string().min(32, "must be at least 32 characters").optional(),
  // Unset: /metrics answers loopback clients only. Set: any client presenting it as a Bearer token.
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  PAYMENTS_MODE: z.enum(["local", "chain", "facilitator"]).default("local"),
  SIGNUP_CREDIT_USD: usd.optional(),
  TRUST_PROXY: z.string().min(1).optional(),
  // DESIGN §4: past it a request is answered 503 and its transaction rolled back.
  REQUEST_DEADLINE_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  TURN_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3_000),
  TURN_FILLER_TEXT: z.string().min(1).max(200).default("One moment, please."),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  // Svix's schedule: eight attempts over about 27 hours.
  WEBHOOK_RETRY_SCHEDULE: schedule.prefault(["5s", "5m", "30m", "2h", "5h", "10h", "10h"].join(",")),
  WEBHOOK_LIVE_RETRY_SCHEDULE: schedule.prefault("250ms,1s"),
  WEBHOOK_RECEIVER_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  RELAY_ACK_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  RELAY_WINDOW: z.coerce.number().int().min(1).max(10_000).default(100),
  RELAY_PING_MS: z.coerce.number().int().min(100).max(300_000).default(25_000),
  // What one account may hold open or in flight at once, so that it never stalls another.
  ACCOUNT_MAX_SOCKETS: z.coerce.number().int().min(1).max(100_000).default(500),
  ACCOUNT_MAX_WAITS: z.coerce.number().int().min(1).max(10_000).default(20),
  ACCOUNT_MAX_AGENTS: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  ACCOUNT_MAX_REQUESTS: z.coerce.number().int().min(1).max(100_000).default(200),
  // Connections one client address may hold open at once (idle keep-alives and sockets included).
  IP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(2_000),
  // The rate card, in USD. Call rates are per minute, billed per second: they must come to a
  // whole number of micro-dollars per second (a multiple of 0.00006 per minute).
  RATE_NUMBER_LOCAL_MONTHLY_USD: usd.default("1.15"),
  RATE_NUMBER_TOLL_FREE_MONTHLY_USD: usd.default("2.15"),
  RATE_NUMBER_MOBILE_MONTHLY_USD: usd.default("1.50"),
  RATE_CALL_INBOUND_PER_MINUTE_USD: perMinute.default("0.0090"),
  RATE_CALL_OUTBOUND_PER_MINUTE_USD: perMinute.default("0.0150"),
  RATE_SMS_INBOUND_USD: usd.default("0.0079"),
  CALL_BILLING_BLOCK_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  NUMBER_GRACE_DAYS: z.coerce.number().int().min(0).max(90).default(7),
  BILLING_INTERVAL_MS: z.coerce.number().int().min(50).max(3_600_000).default(1_000),
  // No-signup payments (x402, MPP): USDC-like EIP-3009 tokens with 6 decimals, so one atomic
  // unit is one micro-dollar. The default network and asset are Base Sepolia's test USDC.
  X402_NETWORK: z.string().regex(/^eip155:\d+$/, "expected a CAIP-2 EVM network such as eip155:84532").default("eip155:84532"),
  X402_ASSET: address.default("0x036CbD53842c5426634e7929541eC2318f3dCF7e"),
  X402_ASSET_NAME: z.string().min(1).default("USDC"),
  X402_ASSET_VERSION: z.string().min(1).default("2"),
  X402_PAYEE: address.optional(),
  X402_RPC_URL: z.url({ protocol: /^https?$/ }).optional(),
  X402_RELAYER_PRIVATE_KEY: z.string().regex(/^0x[0-9a-fA-F]{64}$/, "expected a 32-byte hex private key").optional(),
  X402_FACILITATOR_URL: z.url({ protocol: /^https?$/ }).optional(),
  TOPUP_MIN_USD: usd.default("0.50"),
  TOPUP_MAX_USD: usd.default("500"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  // AgentID sign-in (OpenID Connect). Unset issuer: AgentID is off and its start answers 404.
  AGENTID_ISSUER: issuerUrl.optional(),
  AGENTID_CLIENT_ID: z.string().min(1).max(255).optional(),
  AGENTID_CLIENT_SECRET: z.string().min(1).max(1024).optional(),
  AGENTID_SESSION_TTL_S: z.coerce.number().int().min(60).max(3600).default(600),
  // OAuth for remote MCP clients (DESIGN §9a): an access token lives at most an hour.
  OAUTH_ACCESS_TOKEN_TTL_S: z.coerce.number().int().min(1).max(3600).default(3600),
});

/** The typed configuration every module receives; nothing else reads process.env. */
export interface Config {
  port: number;
  host: string;
  /** Public base URL, no trailing slash. Unset: derived from the listening address. */
  baseUrl: string | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  carrier: "sandbox" | "twilio";
  /** Set exactly when `carrier` is `twilio`. */
  twilio: TwilioConfig | undefined;
  allowPrivateWebhooks: boolean;
  secretKey: string | undefined;
  /** The Bearer token /metrics requires from non-loopback clients; unset: loopback only. */
  metricsToken: string | undefined;
  paymentsMode: "local" | "chain" | "facilitator";
  /** Credit given to each new account, as a decimal USD string. */
  signupCreditUsd: string;
  /** express "trust proxy" setting: false, true, a hop count, or a list of addresses. */
  trustProxy: boolean | number | string;
  logLevel: z.infer<typeof EnvSchema>["LOG_LEVEL"];
  /** How long a request may take (long polls add their wait); also PostgreSQL's statement_timeout. */
  requestDeadlineMs: number;
  /** How long a caller turn waits for an answer before the filler line is spoken. */
  turnTimeoutMs: number;
  turnFillerText: string;
  webhookTimeoutMs: number;
  /** Waits before each retry of a webhook delivery; its length is the number of retries. */
  webhookRetryScheduleMs: number[];
  /** The same for live-turn messages: a few fast retries, then the turn is given up. */
  webhookLiveRetryScheduleMs: number[];
  /** How many deliveries one receiver may have in flight per lane (live, first attempts, retries) in one process. */
  webhookReceiverConcurrency: number;
  /** How long the relay waits for an ack before sending an event again. */
  relayAckTimeoutMs: number;
  /** How many unacknowledged events one relay socket may have in flight. */
  relayWindow: number;
  relayPingMs: number;
  /** How long an OAuth access token for /mcp lives (at most an hour; the client refreshes it). */
  oauthAccessTokenTtlS: number;
  /** What one account, or one client address, may hold open or in flight at once. */
  limits: Limits;
  /** Prices in micro-USD. */
  rates: {
    numberMonthly: { local: number; toll_free: number; mobile: number };
    callPerSecond: { inbound: number; outbound: number };
    smsInbound: number;
  };
  /** Talk time is prepaid in blocks of this many seconds; unused seconds are refunded at the end. */
  callBillingBlockSeconds: number;
  /** How long a number whose renewal failed is kept before it is released. */
  numberGraceDays: number;
  /** How often the billing jobs (call metering, renewals) run. */
  billingIntervalMs: number;
  payments: {
    network: `eip155:${number}`;
    chainId: number;
    asset: `0x${string}`;
    assetName: string;
    assetVersion: string;
    /** Unset: derived from the server secret (local mode only). */
    payee: `0x${string}` | undefined;
    rpcUrl: string | undefined;
    relayerPrivateKey: `0x${string}` | undefined;
    facilitatorUrl: string | undefined;
    topupMinMicros: number;
    topupMaxMicros: number;
  };
  /** AgentID sign-in; undefined when AGENTID_ISSUER is unset (then it answers 404). */
  agentId: AgentIdSettings | undefined;
}

/** Per-account and per-address ceilings; each refusal (a 429 or a WebSocket close) names the one it hit. */
export interface Limits {
  /** WebSockets (relay and softphone) one account may have open. */
  accountSockets: number;
  /** Long polls (MCP wait_for_event) one account may have waiting. */
  accountWaits: number;
  /** Agents one account may have. */
  accountAgents: number;
  /** Requests one account may have in flight. */
  accountRequests: number;
  /** TCP connections one client address may hold open. */
  ipConnections: number;
}

/** Where AgentID sign-in goes and who this service is to it. */
export interface AgentIdSettings {
  /** The issuer identifier, exactly as configured (its discovery document must name the same). */
  issuer: string;
  clientId: string;
  /** Unset: a public client, authenticated by PKCE alone. */
  clientSecret: string | undefined;
  /** How long a sign-in session lives, from start to the last poll. */
  sessionTtlS: number;
}

/** What the Twilio carrier needs: REST credentials, the key its signatures are checked with, where its API is. */
export interface TwilioConfig {
  accountSid: string;
  /** Signs Twilio's webhooks; also the REST password when no API key is set. */
  authToken: string;
  /** REST credentials other than the auth token (both or neither). */
  apiKey: { sid: string; secret: string } | undefined;
  /** Twilio's REST API (a loopback stand-in in tests), no trailing slash. */
  apiUrl: string;
  /** How long one REST request may take before Twilio counts as unavailable. */
  timeoutMs: number;
}

/** Raised when the environment is invalid; its message is one line naming the variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Settings whose values are secrets: an error about one names it, never its value (and startup
 * errors remove their values from any other message).
 */
export const SECRET_SETTINGS: ReadonlySet<string> = new Set([
  "SECRET_KEY",
  "X402_RELAYER_PRIVATE_KEY",
  "METRICS_TOKEN",
  "TWILIO_AUTH_TOKEN",
  "TWILIO_API_KEY_SECRET",
  "AGENTID_CLIENT_SECRET",
]);

/** A URL with its password replaced, for messages and logs. */
export function maskUrlPassword(value: string): string {
  return value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*):[^@/?#]*@/i, "$1:***@");
}

/** `NAME="value"` for an error message, with secrets left out and passwords in URLs masked. */
function shownSetting(name: string, value: string): string {
  if (SECRET_SETTINGS.has(name)) return `${name} (value not shown, ${value.length} characters)`;
  return `${name}=${JSON.stringify(maskUrlPassword(value))}`;
}

/** Parses an environment (normally process.env) once into a Config, or throws ConfigError. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([key, value]) => key in EnvSchema.shape && value !== ""),
  );
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? "environment");
    throw new ConfigError(`Invalid configuration: ${shownSetting(name, present[name] ?? "")}: ${issue.message}`);
  }
  const e = parsed.data;
  const missing = (name: string, why: string) => new ConfigError(`Invalid configuration: ${name} is required ${why}`);
  if (e.PAYMENTS_MODE === "chain" && !e.X402_RPC_URL) throw missing("X402_RPC_URL", "with PAYMENTS_MODE=chain");
  if (e.PAYMENTS_MODE === "chain" && !e.X402_RELAYER_PRIVATE_KEY) throw missing("X402_RELAYER_PRIVATE_KEY", "with PAYMENTS_MODE=chain");
  if (e.PAYMENTS_MODE === "facilitator" && !e.X402_FACILITATOR_URL) throw missing("X402_FACILITATOR_URL", "with PAYMENTS_MODE=facilitator");
  if (e.PAYMENTS_MODE !== "local" && !e.X402_PAYEE) throw missing("X402_PAYEE", `with PAYMENTS_MODE=${e.PAYMENTS_MODE} (real money needs a real payee)`);
  if (e.AGENTID_ISSUER && !e.AGENTID_CLIENT_ID) throw missing("AGENTID_CLIENT_ID", "with AGENTID_ISSUER");
  for (const name of ["AGENTID_CLIENT_ID", "AGENTID_CLIENT_SECRET"] as const) {
    if (e[name] && !e.AGENTID_ISSUER) throw new ConfigError(`Invalid configuration: ${name} is set but AGENTID_ISSUER is not (set both, or neither)`);
  }
  const twilio = e.CARRIER === "twilio" ? twilioConfig(e, missing) : undefined;
  return {
    port: e.PORT,
    host: e.HOST,
    baseUrl: e.BASE_URL?.replace(/\/+$/, ""),
    databaseUrl: e.DATABASE_URL,
    dataDir: e.DATA_DIR,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    carrier: e.CARRIER,
    twilio,
    allowPrivateWebhooks: e.ALLOW_PRIVATE_WEBHOOKS,
    secretKey: e.SECRET_KEY,
    metricsToken: e.METRICS_TOKEN,
    paymentsMode: e.PAYMENTS_MODE,
    signupCreditUsd: e.SIGNUP_CREDIT_USD ?? (e.CARRIER === "sandbox" ? "5.00" : "0"),
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    logLevel: e.LOG_LEVEL,
    requestDeadlineMs: e.REQUEST_DEADLINE_MS,
    turnTimeoutMs: e.TURN_TIMEOUT_MS,
    turnFillerText: e.TURN_FILLER_TEXT,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    webhookRetryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE,
    webhookLiveRetryScheduleMs: e.WEBHOOK_LIVE_RETRY_SCHEDULE,
    webhookReceiverConcurrency: e.WEBHOOK_RECEIVER_CONCURRENCY,
    relayAckTimeoutMs: e.RELAY_ACK_TIMEOUT_MS,
    relayWindow: e.RELAY_WINDOW,
    relayPingMs: e.RELAY_PING_MS,
    oauthAccessTokenTtlS: e.OAUTH_ACCESS_TOKEN_TTL_S,
    limits: {
      accountSockets: e.ACCOUNT_MAX_SOCKETS,
      accountWaits: e.ACCOUNT_MAX_WAITS,
      accountAgents: e.ACCOUNT_MAX_AGENTS,
      accountRequests: e.ACCOUNT_MAX_REQUESTS,
      ipConnections: e.IP_MAX_CONNECTIONS,
    },
    rates: {
      numberMonthly: {
        local: usdToMicros(e.RATE_NUMBER_LOCAL_MONTHLY_USD),
        toll_free: usdToMicros(e.RATE_NUMBER_TOLL_FREE_MONTHLY_USD),
        mobile: usdToMicros(e.RATE_NUMBER_MOBILE_MONTHLY_USD),
      },
      callPerSecond: { inbound: usdToMicros(e.RATE_CALL_INBOUND_PER_MINUTE_USD) / 60, outbound: usdToMicros(e.RATE_CALL_OUTBOUND_PER_MINUTE_USD) / 60 },
      smsInbound: usdToMicros(e.RATE_SMS_INBOUND_USD),
    },
    callBillingBlockSeconds: e.CALL_BILLING_BLOCK_SECONDS,
    numberGraceDays: e.NUMBER_GRACE_DAYS,
    billingIntervalMs: e.BILLING_INTERVAL_MS,
    payments: {
      network: e.X402_NETWORK as `eip155:${number}`,
      chainId: Number(e.X402_NETWORK.split(":")[1]),
      asset: e.X402_ASSET as `0x${string}`,
      assetName: e.X402_ASSET_NAME,
      assetVersion: e.X402_ASSET_VERSION,
      payee: e.X402_PAYEE as `0x${string}` | undefined,
      rpcUrl: e.X402_RPC_URL,
      relayerPrivateKey: e.X402_RELAYER_PRIVATE_KEY as `0x${string}` | undefined,
      facilitatorUrl: e.X402_FACILITATOR_URL,
      topupMinMicros: usdToMicros(e.TOPUP_MIN_USD),
      topupMaxMicros: usdToMicros(e.TOPUP_MAX_USD),
    },
    agentId: e.AGENTID_ISSUER
      ? { issuer: e.AGENTID_ISSUER, clientId: e.AGENTID_CLIENT_ID!, clientSecret: e.AGENTID_CLIENT_SECRET, sessionTtlS: e.AGENTID_SESSION_TTL_S }
      : undefined,
  };
}

type Env = z.infer<typeof EnvSchema>;

/**
 * CARRIER=twilio: the credentials, and a public BASE_URL that Twilio can reach and sign (https;
 * plain http is allowed only for a loopback host, which only a local stand-in can call).
 */
function twilioConfig(e: Env, missing: (name: string, why: string) => ConfigError): TwilioConfig {
  if (!e.TWILIO_ACCOUNT_SID) throw missing("TWILIO_ACCOUNT_SID", "with CARRIER=twilio");
  if (!e.TWILIO_AUTH_TOKEN) throw missing("TWILIO_AUTH_TOKEN", "with CARRIER=twilio (it checks Twilio's signatures, even with an API key)");
  if (e.TWILIO_API_KEY_SID && !e.TWILIO_API_KEY_SECRET) throw missing("TWILIO_API_KEY_SECRET", "with TWILIO_API_KEY_SID");
  if (e.TWILIO_API_KEY_SECRET && !e.TWILIO_API_KEY_SID) throw missing("TWILIO_API_KEY_SID", "with TWILIO_API_KEY_SECRET");
  if (!e.BASE_URL) throw missing("BASE_URL", "with CARRIER=twilio (the public https URL Twilio calls back)");
  const base = new URL(e.BASE_URL);
  if (base.protocol !== "https:" && !LOOPBACK_HOSTS.test(base.hostname)) {
    throw new ConfigError(`Invalid configuration: BASE_URL=${JSON.stringify(e.BASE_URL)}: must be https with CARRIER=twilio (http only for a loopback host)`);
  }
  if (base.search || base.hash) throw new ConfigError(`Invalid configuration: BASE_URL=${JSON.stringify(e.BASE_URL)}: must not carry a query or fragment`);
  return {
    accountSid: e.TWILIO_ACCOUNT_SID,
    authToken: e.TWILIO_AUTH_TOKEN,
    apiKey: e.TWILIO_API_KEY_SID ? { sid: e.TWILIO_API_KEY_SID, secret: e.TWILIO_API_KEY_SECRET! } : undefined,
    apiUrl: e.TWILIO_API_URL.replace(/\/+$/, ""),
    timeoutMs: e.TWILIO_TIMEOUT_MS,
  };
}

const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

function parseTrustProxy(value: string | undefined): boolean | number | string {
  if (value === undefined || value === "false" || value === "0") return false;
  if (value === "true") return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
