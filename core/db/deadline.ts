import { AppError } from "../errors.js";

/** A postgres.js query: `state` is set once it was sent on a connection. */
interface Cancellable {
  cancel(): unknown;
  state?: unknown;
}

/**
 * The deadline of one request. Once it passes the scope is expired: statements not
 * yet sent are withdrawn and no new statement or COMMIT is let through, so nothing commits after
 * the request was answered 503. A statement already running is left to the server's
 * statement_timeout (the same deadline): postgres.js's cancel request opens a connection of its
 * own, which crashed the process when the database dropped it during an outage. A COMMIT already sent when
 * the deadline passes is waited for instead: the request is then answered with its outcome.
 */
export class RequestDeadline {
  private expired = false;
  private committing = 0;
  private readonly running = new Set<Cancellable>();

  constructor(private deadlineAt: number) {}

  /** Milliseconds left; negative once past. */
  remainingMs(): number {
    return this.deadlineAt - Date.now();
  }

  /** A long poll adds the time it is asked to wait (its database work is still bounded). */
  extend(ms: number): void {
    this.deadlineAt += ms;
  }

  get isExpired(): boolean {
    return this.expired;
  }

  get isCommitting(): boolean {
    return this.committing > 0;
  }

  /** Throws the 503 once the deadline has passed; called before every statement and COMMIT. */
  assertLive(): void {
    if (this.expired) throw deadlineExceeded();
  }

  /** Marks the deadline passed and withdraws the statements still waiting for a connection. */
  expire(): void {
    this.expired = true;
    for (const query of this.running) {
      if (query.state) continue;
      try {
        void Promise.resolve(query.cancel()).catch(() => {});
      } catch {
        // already settled
      }
    }
    this.running.clear();
  }

  track(query: Cancellable): void {
    if (!this.expired) this.running.add(query);
  }

  untrack(query: Cancellable): void {
    this.running.delete(query);
  }

  commitStarted(): void {
    this.committing++;
  }

  commitSettled(): void {
    this.committing--;
  }
}

/** The answer to a request past its deadline (its transaction, if any, was rolled back). */
export function deadlineExceeded(): AppError {
  return new AppError(
    "service_unavailable",
    "The request did not finish within its deadline (the database is slow or unreachable); nothing was changed. Try again shortly.",
    {
      headers: { "Retry-After": "1" },
    },
  );
}
