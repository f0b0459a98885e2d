import { AppError, type ErrorCode, type FieldError } from "../../core/errors.js";
import { Reply } from "./reply.js";

/** What is kept of an answer for a retry: the status and body, or the problem of a refusal. */
export function storable(outcome: Reply | AppError): { status: number; body: unknown } {
  if (outcome instanceof AppError) {
    return { status: outcome.status, body: { problem: { code: outcome.code, detail: outcome.detail, extra: outcome.extra, ...(outcome.errors ? { errors: outcome.errors } : {}) } } };
  }
  return { status: outcome.status, body: outcome.body };
}

/** The stored answer, answered again (a refusal is thrown again as the same problem). */
export function replay(status: number, body: unknown, headers: Record<string, string>): Reply {
  const problem = (body as { problem?: { code: ErrorCode; detail: string; extra: Record<string, unknown>; errors?: FieldError[] } } | null)?.problem;
  if (problem) throw new AppError(problem.code, problem.detail, { extra: problem.extra, headers, ...(problem.errors ? { errors: problem.errors } : {}) });
  return new Reply(status, body, headers);
}
