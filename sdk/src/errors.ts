/** A problem answer (RFC 9457) from the service, as an exception. */
export class AgentlineError extends Error {
  override name = "AgentlineError";

  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** The stable problem code (`insufficient_balance`, `turn_stale`, ...), or `http_<status>`. */
    readonly code: string,
    /** What a person should read. */
    readonly detail: string,
    /** For 422: each offending field. */
    readonly errors: Array<{ field: string; message: string }> = [],
    /** The request id, to quote when asking for help. */
    readonly requestId?: string,
  ) {
    super(`${status} ${code}: ${detail}`);
  }

  /** From a response and its parsed problem body (whatever the body is). */
  static from(response: Response, body: unknown, hint = ""): AgentlineError {
    const problem = (body && typeof body === "object" ? body : {}) as Record<string, unknown>;
    const detail = typeof problem.detail === "string" ? problem.detail : typeof body === "string" && body ? body : response.statusText || "request failed";
    return new AgentlineError(
      response.status,
      typeof problem.code === "string" ? problem.code : `http_${response.status}`,
      detail + hint,
      Array.isArray(problem.errors) ? (problem.errors as Array<{ field: string; message: string }>) : [],
      typeof problem.request_id === "string" ? problem.request_id : (response.headers.get("x-request-id") ?? undefined),
    );
  }
}

/** The signature of a webhook delivery did not verify (or was missing, or too old). */
export class WebhookVerificationError extends Error {
  override name = "WebhookVerificationError";
}
