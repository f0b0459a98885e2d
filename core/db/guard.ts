import type postgres from "postgres";
import { currentDeadline } from "../request-scope.js";
import type { TenantGate } from "./tenant-gate.js";
import type { Database } from "./types.js";

/**
 * Makes every transaction of db respect the current request's deadline: none starts, and none
 * commits, once the deadline has passed (throwing in the callback rolls it back). Both drivers.
 */
export function guardTransactions(db: Database): void {
  const original = db.transaction.bind(db);
  db.transaction = ((fn, config) => {
    const deadline = currentDeadline();
    if (!deadline) return original(fn, config);
    deadline.assertLive();
    let committing = false;
    return original(async (tx) => {
      const result = await fn(tx);
      deadline.assertLive();
      committing = true;
      deadline.commitStarted();
      return result;
    }, config).finally(() => {
      if (committing) deadline.commitSettled();
    });
  }) as Database["transaction"];
}

type Sql = postgres.Sql;

// Statements with more parameters than this (IN lists of varying length) are not prepared: each
// length would be a statement of its own, kept by the connection and the server.
const MAX_PREPARED_PARAMETERS = 32;

/**
 * drizzle asks postgres.js for unnamed statements, and postgres.js sends an unnamed statement
 * with parameters in two round trips (Parse + Describe, wait, then Bind + Execute). A prepared
 * one costs a single round trip after its first use on a connection, and the server skips
 * parsing and planning it: about half of a simple query's time. So statements are prepared.
 */
function preparing(args: Parameters<Sql["unsafe"]>): Parameters<Sql["unsafe"]> {
  const [query, parameters, options] = args;
  if (!parameters || parameters.length > MAX_PREPARED_PARAMETERS) return args;
  return [query, parameters, { ...options, prepare: true }];
}

/**
 * A postgres.js client whose statements respect the current request's deadline: a statement is
 * refused once it has passed, and the statements a request has queued or running are cancelled
 * when it passes (queued ones never reach the server). Inside transactions too: the client
 * handed to a `begin` callback is guarded the same way. COMMIT is postgres.js's own and is not
 * touched (guardTransactions decides whether it is sent). Its statements are prepared (above).
 * With a gate, each statement, and each transaction as a whole, waits for its tenant's turn
 * (tenant-gate.ts) before it goes to the pool; the statements inside a transaction do not.
 */
export function guardClient<T extends Sql | postgres.TransactionSql>(sql: T, gate?: TenantGate): T {
  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property === "unsafe") {
        return (...args: Parameters<Sql["unsafe"]>) => {
          const deadline = currentDeadline();
          deadline?.assertLive();
          const query = target.unsafe(...preparing(args));
          deadline?.track(query);
          if (gate) throughGate(query, gate);
          return query;
        };
      }
      if (property === "begin" || property === "savepoint") {
        return (...args: unknown[]) => {
          const fn = args.pop() as (inner: postgres.TransactionSql) => unknown;
          const open = () =>
            (target as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[property]!(...args, (inner: postgres.TransactionSql) =>
              fn(guardClient(inner)),
            );
          return gate && property === "begin" ? gate.run(open) : open();
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * Hands a query to the pool only in its tenant's turn. postgres.js sends a query by calling its
 * `handler` when it is first awaited; the gate calls it instead, and holds the turn until the
 * query settles (read with Promise's own then, which does not send it again). A query the
 * deadline withdrew meanwhile (cancelled before it was sent) is not sent.
 */
function throughGate(query: PromiseLike<unknown>, gate: TenantGate): void {
  const pending = query as unknown as { handler: (q: unknown) => void; cancelled?: unknown };
  const send = pending.handler;
  pending.handler = (q) =>
    void gate.run(() => {
      if (pending.cancelled) return Promise.resolve();
      send(q);
      return Promise.prototype.then.call(
        query,
        () => {},
        () => {},
      );
    });
}
