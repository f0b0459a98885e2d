import WebSocket from "ws";

export type Frame = Record<string, any>;

/**
 * Opens a WebSocket and wraps it, or rejects with the refused upgrade's status. The wrapper is
 * made inside the open handler: frames the server sends at once arrive in that same tick, and a
 * listener attached a microtask later would miss them.
 */
export function openSocket<T>(url: string, apiKey: string | null, wrap: (ws: WebSocket) => T, options: { autoPong?: boolean } = {}): Promise<T> {
  const ws = new WebSocket(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}, autoPong: options.autoPong ?? true });
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve(wrap(ws)));
    ws.once("unexpected-response", (_req, res) => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })));
    ws.once("error", reject);
  });
}

/** A WebSocket client of JSON frames that keeps every frame and can wait for one. */
export class FrameSocket {
  readonly frames: Frame[] = [];
  private waiters: Array<() => void> = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  /** The socket's error, if it had one (a reset connection). */
  error: Error | undefined;

  constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      this.frames.push(JSON.parse(String(data)));
      this.waiters.splice(0).forEach((wake) => wake());
    });
    this.closed = new Promise((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })));
    // A connection reset by the server ends in 'close' too; unheard, the 'error' would end the process.
    ws.on("error", (error) => (this.error = error));
  }

  send(frame: Frame): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** Waits until check returns something other than undefined, or throws after ms. */
  protected async waitUntil<T>(check: () => T | undefined, ms: number, describe: () => string): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = check();
      if (found !== undefined) return found;
      if (Date.now() > deadline)
        throw new Error(`${describe()} within ${ms} ms${this.error ? ` (socket error: ${this.error.message})` : ""}; got ${JSON.stringify(this.frames)}`);
      // Woken by the next frame, or after 50 ms to look at the deadline; the timer goes with the
      // wake (a benchmark waits thousands of times a second, and stray timers were its CPU).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The first frame (from `from` on) matching predicate, waiting up to `ms`. */
  next(predicate: (frame: Frame) => boolean, ms = 5_000, from = 0): Promise<Frame> {
    return this.waitUntil(
      () => this.frames.slice(from).find(predicate),
      ms,
      () => "no matching frame",
    );
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close();
    return this.closed;
  }
}
