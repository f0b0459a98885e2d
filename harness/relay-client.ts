import { type Frame, FrameSocket, openSocket } from "./frame-socket.js";

/** A real WebSocket client on the relay, as an agent runtime would hold it. */
export class RelayClient extends FrameSocket {
  static connect(baseUrl: string, query: Record<string, string>, apiKey: string | null, options: { autoPong?: boolean } = {}): Promise<RelayClient> {
    return openSocket(`${baseUrl.replace(/^http/, "ws")}/v1/events/ws?${new URLSearchParams(query)}`, apiKey, (ws) => new RelayClient(ws), options);
  }

  /** Opens a full relay URL (one carrying a ticket) with no Authorization header. */
  static connectUrl(url: string): Promise<RelayClient> {
    return openSocket(url, null, (ws) => new RelayClient(ws));
  }

  /** Event frames received so far, as envelopes. */
  events(): Frame[] {
    return this.frames.filter((f) => f.type === "event").map((f) => f.event);
  }

  /** Waits until at least n event frames (matching filter) have arrived. */
  waitForEvents(n: number, filter: (e: Frame) => boolean = () => true, ms = 5_000): Promise<Frame[]> {
    return this.waitUntil(
      () => {
        const found = this.events().filter(filter);
        return found.length >= n ? found : undefined;
      },
      ms,
      () => `expected ${n} relay events`,
    );
  }

  ack(...eventIds: string[]): void {
    this.send(eventIds.length === 1 ? { type: "ack", event_id: eventIds[0] } : { type: "ack", event_ids: eventIds });
  }
}
