import type { PGlite } from "@electric-sql/pglite";
import { currentTenant } from "../request-scope.js";

// Long enough for a few statements per turn of the loop (one per turn starved the database when
// a flood of cheap requests made every turn long), short beside a request's latency.
const TURN_BUDGET_MS = 5;

/**
 * Runs work one piece at a time, taking turns between tenants. Each tenant's pieces wait in a
 * line of their own, and the lines are served round robin: a tenant with a thousand pieces
 * queued waits behind its own, while another's piece waits behind at most one of each.
 *
 * Pieces start from the event loop's check phase (setImmediate), one after another for at most
 * TURN_BUDGET_MS, then the loop reads its sockets again. PGlite runs in this thread: started at
 * once, each piece ran inside the I/O callback that asked for it, and one turn of the loop read
 * 1,871 relay upgrades and ran all their statements (ten seconds) before it read another
 * tenant's request. Deferred, a turn only queues what its callbacks ask for.
 */
export class FairQueue {
  /** Tenant → its waiting pieces. A Map keeps insertion order: the first key is next in the round. */
  private readonly lines = new Map<string, Array<() => void>>();
  private busy = false;
  private scheduled = false;
  /** When the current check-phase turn began starting pieces. */
  private turnStarted = 0;

  run<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        let running: Promise<T>;
        try {
          running = work();
        } catch (error) {
          running = Promise.reject(error);
        }
        running.then(resolve, reject).finally(() => {
          this.busy = false;
          if (performance.now() - this.turnStarted < TURN_BUDGET_MS) this.startNext();
          else this.schedule();
        });
      };
      const line = this.lines.get(tenant);
      if (line) line.push(start);
      else this.lines.set(tenant, [start]);
      this.schedule();
    });
  }

  /** Pieces waiting, of every tenant. */
  get waiting(): number {
    let total = 0;
    for (const line of this.lines.values()) total += line.length;
    return total;
  }

  private schedule(): void {
    if (this.busy || this.scheduled || this.lines.size === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.turnStarted = performance.now();
      this.startNext();
    });
  }

  private startNext(): void {
    const first = this.lines.entries().next();
    if (this.busy || first.done) return;
    const [tenant, line] = first.value;
    const start = line.shift()!;
    // To the back of the round, or out of it when empty.
    this.lines.delete(tenant);
    if (line.length > 0) this.lines.set(tenant, line);
    this.busy = true;
    start();
  }
}

/**
 * The embedded database as drizzle and the service use it (query, exec, transaction), with
 * every statement and transaction taking its tenant's turn (FairQueue): the request's account
 * once it is authenticated, its client's address before (a credential's check may read the
 * database), one line for all background work. PGlite runs one statement or transaction at a
 * time, in arrival order, in this thread: 2,000 relay sockets opened by one account held another
 * tenant's GET for 10 s (docs/decisions/0069-database-fair-share.md). A transaction holds its turn to
 * the end, as it holds PGlite; the statements inside it go to PGlite's transaction handle.
 */
export function fairPglite(pglite: PGlite): PGlite {
  const queue = new FairQueue();
  const tenant = () => currentTenant() ?? "";
  const fair: Pick<PGlite, "query" | "exec" | "transaction"> = {
    query: (...args) => queue.run(tenant(), () => pglite.query(...args)),
    exec: (...args) => queue.run(tenant(), () => pglite.exec(...args)),
    transaction: (callback) => queue.run(tenant(), () => pglite.transaction(callback)),
  };
  return fair as PGlite;
}
