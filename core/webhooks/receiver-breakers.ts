// A receiver that has not answered this many attempts in a row (timeouts, refused connections)
// is left alone for a while, so it stops holding sockets and retry room that others need.
const OPEN_AFTER_SILENT_ATTEMPTS = 3;
const OPEN_FOR_MS = 30_000;

interface Breaker {
  silent: number;
  openUntil: number;
}

/**
 * A circuit breaker per receiver (webhook id), in this process. Closed: no limit beyond the
 * receiver's concurrency. Open (after OPEN_AFTER_SILENT_ATTEMPTS silent attempts in a row): none
 * of its deliveries is started for OPEN_FOR_MS; they wait, due, and nothing is given up. Half
 * open (after that): one delivery at a time until one is answered, which closes it; another
 * silence opens it again.
 */
export class ReceiverBreakers {
  private readonly breakers = new Map<string, Breaker>();

  constructor(private readonly now: () => Date) {}

  record(webhookId: string, answered: boolean): void {
    if (answered) {
      this.breakers.delete(webhookId);
      return;
    }
    const breaker = this.breakers.get(webhookId) ?? { silent: 0, openUntil: 0 };
    breaker.silent++;
    if (breaker.silent >= OPEN_AFTER_SILENT_ATTEMPTS) breaker.openUntil = this.now().getTime() + OPEN_FOR_MS;
    this.breakers.set(webhookId, breaker);
  }

  /** The receivers under a limit, with how many deliveries each may have in flight (0 when open). */
  limits(): Map<string, number> {
    const now = this.now().getTime();
    const limits = new Map<string, number>();
    for (const [webhookId, breaker] of this.breakers) {
      if (breaker.silent < OPEN_AFTER_SILENT_ATTEMPTS) continue;
      limits.set(webhookId, now < breaker.openUntil ? 0 : 1);
    }
    return limits;
  }
}
