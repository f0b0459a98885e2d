import { seal, unseal } from "../../core/auth/sealed.js";
import type { Core } from "../../core/context.js";
import { AppError, type ErrorCode, type FieldError } from "../../core/errors.js";
import { Reply } from "./reply.js";

/** What is kept of an answer for a retry: the status and body, or the problem of a refusal. */
export function storable(outcome: Reply | AppError): { status: number; body: unknown } {
  if (outcome instanceof AppError) {
    return {
      status: outcome.status,
      body: { problem: { code: outcome.code, detail: outcome.detail, extra: outcome.extra, ...(outcome.errors ? { errors: outcome.errors } : {}) } },
    };
  }
  return { status: outcome.status, body: outcome.body };
}

/** The stored answer, to answer again: a reply, or the problem of a refusal. */
export function storedAnswer(status: number, body: unknown, headers: Record<string, string>): Reply | AppError {
  const problem = (body as { problem?: { code: ErrorCode; detail: string; extra: Record<string, unknown>; errors?: FieldError[] } } | null)?.problem;
  if (problem) return new AppError(problem.code, problem.detail, { extra: problem.extra, headers, ...(problem.errors ? { errors: problem.errors } : {}) });
  return new Reply(status, body, headers);
}

/** The stored answer, answered again (a refusal is thrown again as the same problem). */
export function replay(status: number, body: unknown, headers: Record<string, string>): Reply {
  const answer = storedAnswer(status, body, headers);
  if (answer instanceof AppError) throw answer;
  return answer;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The agent token an answer carries, changed by `change`: a top-up's `agent_token`, or the one in
 * a paid refusal's `payment` note. Credentials are stored hashed; a stored answer keeps this one
 * sealed, and a retry opens it.
 */
function withToken(body: unknown, change: (token: string) => string): unknown {
  if (!isObject(body)) return body;
  if (typeof body.agent_token === "string") return { ...body, agent_token: change(body.agent_token) };
  const problem = body.problem;
  const payment = isObject(problem) && isObject(problem.extra) && isObject(problem.extra.payment) ? problem.extra.payment : undefined;
  if (!isObject(problem) || !isObject(problem.extra) || typeof payment?.agent_token !== "string") return body;
  return { ...body, problem: { ...problem, extra: { ...problem.extra, payment: { ...payment, agent_token: change(payment.agent_token) } } } };
}

/** The answer as it is stored: any agent token in it sealed. */
export function sealTokens(core: Pick<Core, "secrets">, body: unknown): unknown {
  return withToken(body, (token) => seal(core, token));
}

/** A stored answer as it is answered again: its agent token opened. */
export function openTokens(core: Pick<Core, "secrets">, body: unknown): unknown {
  return withToken(body, (token) => unseal(core, token));
}
