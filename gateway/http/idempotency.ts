import { createHash } from "node:crypto";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { beginIdempotent, finishIdempotent, releaseIdempotent } from "../../core/idempotency.js";
import { idempotencyRefusal, type Operation, takesIdempotencyKey } from "../../discovery/operation.js";
import type { Caller } from "./principal.js";
import type { Reply } from "./reply.js";
import { replay, storable } from "./stored-answers.js";

function headerProblem(message: string, detail: string): AppError {
  return new AppError("validation_error", detail, { errors: [{ field: "Idempotency-Key", in: "header", message }] });
}

/** An Idempotency-Key, and whose keys it is among: the account, or for a push token the token itself (one call's pushes). */
export interface IdempotencyKey {
  key: string;
  scope: string;
}

/**
 * The Idempotency-Key a request may use, or undefined when it sent none. One rule for every
 * route (`takesIdempotencyKey`): a route that does not honour the key refuses it with a 422
 * rather than ignoring it, so a client never believes a retry is safe when it is not. A request
 * paying with a payment (no agent token) refuses it too: the payment is what makes its retry
 * safe (the same payment gets the same answer), and a new payment would be credited anyway.
 */
export function idempotencyKeyOf(op: Operation, header: string | undefined, caller: Caller): IdempotencyKey | undefined {
  if (header === undefined) return undefined;
  const where = `${op.method.toUpperCase()} ${op.path}`;
  // Only a route open to anyone has an anonymous caller, and such a route takes no key.
  if (!takesIdempotencyKey(op) || caller.kind === "anonymous") {
    const why = idempotencyRefusal(op);
    throw headerProblem(`is not supported on ${where}: ${why}`, `Idempotency-Key is not supported on ${where}: ${why}.`);
  }
  if (caller.kind === "unpaid") {
    const why =
      "a request paid with a payment is made safe to retry by sending the same payment again (it gets the same answer); send an agent_token to use an Idempotency-Key";
    throw headerProblem(`is not supported with a payment: ${why}`, `Idempotency-Key is not supported with a payment: ${why}.`);
  }
  if (!/^[\x21-\x7e]{1,255}$/.test(header)) {
    throw headerProblem("must be 1 to 255 printable characters", "Idempotency-Key must be 1 to 255 printable characters.");
  }
  // The caller's own account: a request an agent token pays for acts for that token's account.
  const scope = caller.kind === "push_token" ? `push_token:${createHash("sha256").update(caller.token).digest("hex")}` : caller.accountId;
  return { key: header, scope };
}

/**
 * The idempotent step: runs a request at most once per Idempotency-Key. A retry with the same
 * key and request gets the stored answer (marked Idempotent-Replayed). Final answers are stored,
 * errors included, as Stripe does; a 5xx or 429 is not, so the retry runs again.
 */
export async function runIdempotent(core: Core, { key, scope }: IdempotencyKey, requestHash: string, run: () => Promise<Reply>): Promise<Reply> {
  const started = await beginIdempotent(core.db, scope, key, requestHash, core.now());
  if (started.kind === "replay") return replay(started.status, started.body, { "Idempotent-Replayed": "true" });
  try {
    const reply = await run();
    await finishIdempotent(core.db, scope, key, reply.status, reply.body);
    return reply;
  } catch (error) {
    if (error instanceof AppError && error.status < 500 && error.status !== 429) {
      const { status, body } = storable(error);
      await finishIdempotent(core.db, scope, key, status, body);
    } else {
      await releaseIdempotent(core.db, scope, key);
    }
    throw error;
  }
}
