import WebSocket from "ws";

export type Frame = Record<string, any>;

/**
 * A real WebSocket client on the sandbox softphone: it hears what the agent says and drives the
 * far party, as the end-to-end tests and the latency benchmark do.
 */
export class Softphone {
  readonly frames: Frame[] = [];
  private waiters: Array<() => void> = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      this.frames.push(JSON.parse(String(data)));
      this.waiters.splice(0).forEach((wake) => wake());
    });
    this.closed = new Promise((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })));
  }

  static connect(baseUrl: string, callId: string, apiKey: string | null): Promise<Softphone> {
    const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/v1/sandbox/calls/${callId}/ws`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
    });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new Softphone(ws)));
      ws.once("unexpected-response", (_req, res) => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode })));
      ws.once("error", reject);
    });
  }

  send(frame: Frame): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** The first frame (from `from` on) matching predicate, waiting up to `ms`. */
  async next(predicate: (frame: Frame) => boolean, ms = 5_000, from = 0): Promise<Frame> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.frames.slice(from).find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching frame within ${ms} ms; got ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  /** Says a line and returns the turn it opened. */
  async say(text: string): Promise<string> {
    const from = this.frames.length;
    this.send({ type: "say", text });
    const said = await this.next((f) => f.type === "said" || f.type === "error", 5_000, from);
    if (said.type === "error") throw new Error(`say refused: ${said.code}: ${said.message}`);
    return said.turn_id;
  }

  close(): void {
    this.ws.close();
  }
}
