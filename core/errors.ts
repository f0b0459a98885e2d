/**
 * Every error code of the service, with its HTTP status and when it is thrown. Codes are
 * stable: clients branch on them, so a code is never renamed or given another status.
 * `GET /problems/{code}` serves this table.
 */
export const ERROR_CODES = {
  validation_error: { status: 422, title: "Validation failed", when: "A request body or query failed validation; `errors` lists each offending field." },
  malformed_json: {
    status: 400,
    title: "Malformed JSON",
    when: "The body is not parseable JSON, or is JSON over the limits the service reads: nested deeper than `max_depth` (64) levels, or more than `max_containers` (10,000) arrays and objects.",
  },
  bad_request: { status: 400, title: "Bad request", when: "The request is well formed but cannot be carried out as asked." },
  invalid_otp: { status: 400, title: "Invalid or expired code", when: "The one-time code is wrong, expired or already used (one answer for all three)." },
  authorization_pending: {
    status: 400,
    title: "Authorization pending",
    when: "An AgentID sign-in is polled before its user has finished at the identity provider; poll again after `interval` seconds (RFC 8628).",
  },
  slow_down: {
    status: 400,
    title: "Slow down",
    when: "An AgentID sign-in is polled sooner than `interval` seconds after the previous poll; the interval grows by 5 seconds (RFC 8628).",
  },
  access_denied: {
    status: 400,
    title: "Access denied",
    when: "The user refused the AgentID sign-in at the identity provider (RFC 8628); start a new sign-in to try again.",
  },
  expired_token: {
    status: 400,
    title: "Sign-in expired",
    when: "An AgentID sign-in session outlived its `expires_in` before it completed (RFC 8628); start a new one.",
  },
  sign_in_failed: {
    status: 400,
    title: "Sign-in failed",
    when: "The identity provider's answer to an AgentID sign-in did not check out (an ID token with a bad signature, audience, nonce or expiry; a wrong issuer; a refused code); `detail` says which. Start a new sign-in.",
  },
  no_active_number: { status: 400, title: "Agent has no active phone number", when: "A call was asked of an agent that has no active phone number." },
  unauthorized: { status: 401, title: "Unauthorized", when: "No credentials, or credentials that are unknown, revoked or expired." },
  insufficient_balance: { status: 402, title: "Insufficient balance", when: "The balance does not cover what was asked." },
  payment_required: { status: 402, title: "Payment required", when: "A paid route was called without a valid payment or agent_token." },
  forbidden: { status: 403, title: "Forbidden", when: "The credentials are valid but may not do this." },
  insufficient_scope: {
    status: 403,
    title: "Insufficient scope",
    when: "An MCP client signed in with OAuth called a tool its connection was not granted the scope for; `WWW-Authenticate` names the scopes to sign in again with (step-up).",
  },
  origin_not_allowed: {
    status: 403,
    title: "Origin not allowed",
    when: "A browser request to /mcp came from a page on another site (its Origin is neither BASE_URL's nor loopback).",
  },
  not_found: { status: 404, title: "Not found", when: "No such resource for this account (another account's resource answers the same)." },
  method_not_allowed: { status: 405, title: "Method not allowed", when: "The method is not allowed on this path." },
  not_acceptable: {
    status: 406,
    title: "Not acceptable",
    when: "The Accept header names no media type this route answers with (MCP needs application/json and text/event-stream).",
  },
  conflict: { status: 409, title: "Conflict", when: "The state of the resource does not allow the request." },
  cannot_revoke_current_key: {
    status: 409,
    title: "Cannot revoke the key in use",
    when: "The credential authenticating a revoke request (an API key, an agent token) names itself; an agent token can be rotated instead.",
  },
  no_numbers_available: {
    status: 409,
    title: "No numbers available",
    when: "The carrier has no number matching the request (country, type, area code); try another area code.",
  },
  number_unavailable: {
    status: 409,
    title: "Number unavailable",
    when: "The carrier no longer has the number: it was taken by someone else, or removed from the carrier account.",
  },
  number_in_use: {
    status: 409,
    title: "Number in use",
    when: "The phone number is already on the service, or was released from it (released numbers are never reused).",
  },
  number_released: {
    status: 409,
    title: "Number released",
    when: "The number has been released; releasing is permanent, so it can be neither released again nor reassigned.",
  },
  number_not_in_service: {
    status: 409,
    title: "Number not in service",
    when: "A sandbox call or text was sent to a number that no agent answers (unassigned).",
  },
  recipient_opted_out: {
    status: 409,
    title: "Recipient opted out",
    when: "A text was sent to a number that texted STOP (or UNSUBSCRIBE, CANCEL, END, QUIT, STOPALL) to the sending number, and not START since; nothing was charged or sent.",
  },
  call_not_in_progress: {
    status: 409,
    title: "Call not in progress",
    when: "The far party tried to speak, or the agent to say a line or press keys, on a call that is not connected yet.",
  },
  turn_abandoned: {
    status: 409,
    title: "Turn abandoned",
    when: "A context push answers a turn whose call.utterance could not be delivered to the webhook and was given up.",
  },
  turn_answered: { status: 409, title: "Turn already answered", when: "A context push answers a turn that an earlier final push already answered." },
  idempotency_conflict: { status: 409, title: "Idempotency key reused", when: "An Idempotency-Key was reused with a different request." },
  turn_stale: { status: 409, title: "Turn is stale", when: "A context push answers a turn that a newer caller utterance replaced." },
  turn_cancelled: { status: 409, title: "Turn was cancelled", when: "A context push answers a turn that the caller interrupted." },
  turn_open: {
    status: 409,
    title: "A turn is waiting for its answer",
    when: "An unprompted line (`POST /v1/calls/{call_id}/say`) was sent while a caller turn is open and unanswered: answer the turn with a context push instead, so the agent never talks over its own answer.",
  },
  transfer_in_progress: {
    status: 409,
    title: "Transfer in progress",
    when: "The call is already being transferred, or has been handed to a person: the agent no longer speaks on it (a warm transfer that failed gives it back).",
  },
  call_ended: { status: 410, title: "Call has ended", when: "A context push, an unprompted line or keypad digits arrived after the call ended." },
  gone: { status: 410, title: "Gone", when: "A resource existed but is permanently gone (a released number, a consumed session)." },
  payload_too_large: { status: 413, title: "Payload too large", when: "The request body is larger than the service accepts." },
  unsupported_media_type: { status: 415, title: "Unsupported media type", when: "The request body is not JSON." },
  rate_limited: { status: 429, title: "Too many requests", when: "Too many requests; `Retry-After` says when to try again." },
  limit_reached: {
    status: 429,
    title: "Limit reached",
    when: "The account (or client address) already holds as many of something as it may at once (sockets, long polls, agents, requests in flight); `limit` names which and `max` its size, as listed in /.well-known/service.json. Close or finish one, or retry after `Retry-After`.",
  },
  internal_error: { status: 500, title: "Internal server error", when: "Something unexpected failed; the log has the detail under the request id." },
  carrier_unavailable: {
    status: 502,
    title: "Carrier unavailable",
    when: "The telephone carrier (Twilio) could not be reached, failed, timed out or refused the service's credentials; nothing was charged or changed, so the request can be retried.",
  },
  service_unavailable: {
    status: 503,
    title: "Service unavailable",
    when: "A dependency (database, mail server, the AgentID identity provider) is unavailable right now.",
  },
} as const satisfies Record<string, { status: number; title: string; when: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Where in an HTTP request a field was sent. */
export type FieldLocation = "query" | "body" | "header" | "path";

/** One offending field of a validation error; `in` says where the request carried it (HTTP only). */
export interface FieldError {
  field: string;
  message: string;
  in?: FieldLocation;
}

export interface AppErrorOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
  cause?: unknown;
  /** Extra members for the problem body (for example `retry_after`, `required`). */
  extra?: Record<string, unknown>;
}

/** An expected failure with a stable code, an HTTP status from ERROR_CODES and a user-facing detail. */
export class AppError extends Error {
  override name = "AppError";
  readonly status: number;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    options: AppErrorOptions = {},
  ) {
    super(detail, { cause: options.cause });
    this.status = ERROR_CODES[code].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

/** The names of the per-account and per-address ceilings (config.limits), as refusals and the service document name them. */
export type LimitName = "account_sockets" | "account_waits" | "account_agents" | "account_requests" | "ip_connections";

/** The 429 for a ceiling that is full: names the limit and its size; Retry-After in seconds. */
export function limitReached(limit: LimitName, max: number, detail: string, retryAfterSeconds = 1): AppError {
  return new AppError("limit_reached", detail, { headers: { "Retry-After": String(retryAfterSeconds) }, extra: { limit, max } });
}

/** The most characters of a name or value the client sent that an error repeats. */
export const MAX_QUOTED_CHARS = 64;

/** Text the client sent, as an error repeats it: cut to MAX_QUOTED_CHARS, with an ellipsis (never inside a surrogate pair). */
export function quoted(text: string): string {
  if (text.length <= MAX_QUOTED_CHARS) return text;
  const end = /[\ud800-\udbff]/.test(text[MAX_QUOTED_CHARS - 2]!) ? MAX_QUOTED_CHARS - 2 : MAX_QUOTED_CHARS - 1;
  return `${text.slice(0, end)}…`;
}

/** The 404 every lookup gives for a missing or foreign resource. */
export function notFound(kind: string, id: string): AppError {
  return new AppError("not_found", `No ${kind} with id ${JSON.stringify(quoted(id))} exists on this account.`);
}

// Node's codes for a peer that cannot be reached, and postgres.js's for a lost or unmade connection.
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
]);
// SQLSTATEs that say "not now", not "never": connection exceptions (class 08), insufficient
// resources (53), operator intervention such as a shutting-down server or a cancelled or timed-out
// statement (57), and the conflicts a retry resolves (40001 serialization, 40P01 deadlock, 55P03
// lock not available, 25P03 idle-in-transaction timeout).
const TRANSIENT_SQLSTATE = /^(08|53|57)|^(40001|40P01|55P03|25P03)$/;

/**
 * A database (or pool) failure that is the service's, not the client's: 503 service_unavailable
 * with Retry-After, for every route. Looks through wrappers (drizzle keeps the
 * driver's error as `cause`). Undefined for anything else, which stays a 500.
 */
export function unavailableDependency(error: unknown): AppError | undefined {
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof AppError) return e.code === "service_unavailable" ? e : undefined;
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    const transient =
      (typeof code === "string" && (UNREACHABLE_CODES.has(code) || (name === "PostgresError" && TRANSIENT_SQLSTATE.test(code)))) ||
      (typeof message === "string" && /^PGlite is closed/.test(message));
    if (transient) {
      return new AppError("service_unavailable", "The database is unavailable right now; nothing was changed. Try again shortly.", {
        headers: { "Retry-After": "1" },
        cause: error,
      });
    }
  }
  return undefined;
}
