/**
 * The benchmark's own WebSocket client: a raw `ws` socket that hands each JSON frame to the one
 * waiter it has, and drops the rest unparsed. The test suite's FrameSocket keeps every frame,
 * searches them on each arrival and sets a timer per wait; the client shares the two cores with
 * the service and PostgreSQL, so its CPU counted against the service's throughput
 * (docs/decisions/0064-benchmark-method.md).
 */
import WebSocket from "ws";

export type Frame = Record<string, any>;

interface Waiter {
  match: (frame: Frame) => boolean;
  resolve: (frame: Frame) => void;
  reject: (error: Error) => void;
  deadline: number;
  what: string;
}

const open = new Set<FrameLine>();
// One watchdog for every line's wait, rather than a timer per wait.
let watchdog: NodeJS.Timeout | undefined;

function watch(line: FrameLine): void {
  open.add(line);
  watchdog ??= setInterval(() => {
    const now = Date.now();
    for (const each of open) each.expire(now);
  }, 500);
  watchdog.unref();
}

export class FrameLine {
  private waiter: Waiter | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const waiter = this.waiter;
      if (!waiter) return;
      const frame = JSON.parse(String(data)) as Frame;
      if (!waiter.match(frame)) return;
      this.waiter = undefined;
      waiter.resolve(frame);
    });
    ws.on("close", () => this.fail(new Error("socket closed")));
    ws.on("error", (error) => this.fail(error));
  }

  /** Opens url with the API key (if any) and resolves once the socket is open. */
  static connect(url: string, apiKey: string | null): Promise<FrameLine> {
    const ws = new WebSocket(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
    return new Promise((resolve, reject) => {
      // Made inside the open handler: frames the server sends at once arrive in that same tick.
      ws.once("open", () => {
        const line = new FrameLine(ws);
        watch(line);
        resolve(line);
      });
      ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once("error", reject);
    });
  }

  /** The next frame matching `match`, waiting at most ms. Call before sending what it answers. */
  next(match: (frame: Frame) => boolean, ms: number, what: string): Promise<Frame> {
    if (this.waiter) return Promise.reject(new Error(`already waiting for ${this.waiter.what}`));
    return new Promise((resolve, reject) => (this.waiter = { match, resolve, reject, deadline: Date.now() + ms, what }));
  }

  send(frame: Frame): void {
    this.ws.send(JSON.stringify(frame));
  }

  expire(now: number): void {
    if (this.waiter && now > this.waiter.deadline) this.fail(new Error(`no ${this.waiter.what} within the wait`));
  }

  private fail(error: Error): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(error);
  }

  close(): void {
    open.delete(this);
    this.ws.close();
  }
}
