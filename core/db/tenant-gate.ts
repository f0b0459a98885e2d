import { currentTenant } from "../request-scope.js";

/**
 * At most `perTenant` pieces of work of one account running at once; the rest wait in the
 * account's own line, first come first served. Work for no account (background jobs, requests
 * before authentication, a call's push token) is never held. For
 * PostgreSQL's pool, whose queue is one line for everybody: 200 requests of one account in flight
 * queued their statements in front of another tenant's, and its GET took 47 ms instead of 0.4
 * (docs/decisions/0069-database-fair-share.md). Held here, a tenant's burst waits behind itself.
 */
export class TenantGate {
  private readonly running = new Map<string, number>();
  private readonly lines = new Map<string, Array<() => void>>();

  constructor(private readonly perTenant: number) {}

  /** Runs work now, or once the current account has fewer than perTenant pieces running. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const tenant = currentTenant();
    if (!tenant?.startsWith("account:")) return work();
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        this.running.set(tenant, (this.running.get(tenant) ?? 0) + 1);
        let running: Promise<T>;
        try {
          running = work();
        } catch (error) {
          running = Promise.reject(error);
        }
        running.then(resolve, reject).finally(() => this.finished(tenant));
      };
      if ((this.running.get(tenant) ?? 0) < this.perTenant) return start();
      const line = this.lines.get(tenant);
      if (line) line.push(start);
      else this.lines.set(tenant, [start]);
    });
  }

  private finished(tenant: string): void {
    const left = this.running.get(tenant)! - 1;
    if (left > 0) this.running.set(tenant, left);
    else this.running.delete(tenant);
    const line = this.lines.get(tenant);
    const next = line?.shift();
    if (line?.length === 0) this.lines.delete(tenant);
    next?.();
  }
}
