import { AgentlineError } from "./errors.js";
import { type AgentlineEvent, type EventType, SeenEvents } from "./events.js";

/** What to do with each event type; `"*"` takes the types with no handler of their own. */
export type RelayHandlers = { [T in EventType]?: (event: AgentlineEvent<T>) => unknown } & { "*"?: (event: AgentlineEvent) => unknown };

export type RelayStatus = "connecting" | "open" | "reconnecting" | "closed";

/** The part of a WebSocket the relay client uses: the browser's, Node's built-in, or `ws`'s. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}
export type SocketConstructor = new (url: string) => SocketLike;

export interface RelayOptions {
  /** The relay URL to open (with its ticket), fetched again for every connection. */
  url?: () => Promise<string>;
  /** A label the service keeps for diagnostics (`[a-z0-9_-]{1,32}`). Default `sdk`. */
  runtime?: string;
  /** Reconnect delays: full jitter on an exponential ramp from `initialMs` (250) to `maxMs` (30 s). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** No frame and no ping for this long means the connection is dead (ws only, which sees pings). Default 70 s. */
  idleTimeoutMs?: number;
  /** A connection not ready (the relay's `ready` frame) this long after it was begun is dropped and tried again. Default 15 s. */
  handshakeTimeoutMs?: number;
  /** Where handled event ids are remembered. Default: the last 10,000 in memory. */
  seen?: Pick<SeenEvents, "has" | "add">;
  /** A handler threw, or the relay gave up (revoked key, deleted agent, replaced by another connection). */
  onError?: (error: unknown, event?: AgentlineEvent) => void;
  onStatus?: (status: RelayStatus) => void;
  /** The WebSocket class. Default: the global one, else the `ws` package. */
  WebSocket?: SocketConstructor;
}

/** A held relay connection. */
export interface RelayConnection {
  /** Resolves when the first connection is ready. */
  readonly ready: Promise<void>;
  readonly status: RelayStatus;
  /** Closes for good: no more reconnects; handlers already running finish. Resolves once the status is `closed`. */
  close(): Promise<void>;
}

/** Close code of a socket that a newer one for the same agent replaced: reconnecting would fight it. */
const REPLACED = 4000;
/** Close code of a socket whose key (or the key that minted its ticket) was revoked: reconnecting would be refused. */
const CREDENTIAL_REVOKED = 4401;
const OPEN = 1;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

async function defaultSocket(): Promise<SocketConstructor> {
  const global = (globalThis as { WebSocket?: SocketConstructor }).WebSocket;
  if (global) return global;
  return (await import("ws")).WebSocket as unknown as SocketConstructor;
}

/**
 * Holds an agent's relay (see `Agentline.relay`, which supplies the ticketed URL). Events are
 * handed to their handler as they arrive, each once: an id already handed is never handed again,
 * whether the server sends it again after a lost ack, a reconnect or a restart. An event is
 * acknowledged when its handler settles, on whichever connection is open then.
 */
// biome-ignore lint/correctness/noUnusedFunctionParameters: part of the exported signature; the URL factory already names the agent.
export function relay(agentId: string, handlers: RelayHandlers, options: RelayOptions & { url: () => Promise<string> }): RelayConnection {
  const seen = options.seen ?? new SeenEvents();
  const running = new Set<string>();
  const unsentAcks = new Set<string>();
  const stopping = new AbortController();
  const runningHandlers = new Set<Promise<void>>();
  const initial = options.backoff?.initialMs ?? 250;
  const max = options.backoff?.maxMs ?? 30_000;
  let status: RelayStatus = "connecting";
  let closing = false;
  let socket: SocketLike | undefined;
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const setStatus = (next: RelayStatus) => {
    if (status === next) return;
    status = next;
    options.onStatus?.(next);
  };
  const report = (error: unknown, event?: AgentlineEvent) => (options.onError ? options.onError(error, event) : undefined);

  const ack = (eventId: string) => {
    if (socket?.readyState === OPEN) socket.send(JSON.stringify({ type: "ack", event_id: eventId }));
    else unsentAcks.add(eventId);
  };

  const hand = (event: AgentlineEvent) => {
    // Once closing, new events are left unacknowledged: the next connection gets them.
    if (closing) return;
    const id = event.event_id;
    if (!seen.add(id)) {
      // Sent again: its ack was lost. Ack it again once its handler (if still running) is done.
      if (!running.has(id)) ack(id);
      return;
    }
    running.add(id);
    const handler = (handlers[event.event_type] ?? handlers["*"]) as ((e: AgentlineEvent) => unknown) | undefined;
    const done = (async () => {
      try {
        await handler?.(event);
      } catch (error) {
        report(error, event);
      } finally {
        running.delete(id);
        ack(id);
      }
    })();
    runningHandlers.add(done);
    void done.then(() => runningHandlers.delete(done));
  };

  /** One connection, from opening to closing: its close code, and whether it got as far as `ready`. */
  const connectOnce = async (Socket: SocketConstructor): Promise<{ code: number; wasReady: boolean }> => {
    const url = new URL(await options.url());
    url.searchParams.set("runtime", options.runtime ?? "sdk");
    const ws = new Socket(url.toString());
    socket = ws;
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const idle = options.idleTimeoutMs ?? 70_000;
    const alive = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => ws.close(4001, "no ping from the server"), idle);
    };
    (ws as unknown as { on?: (name: string, fn: () => void) => void }).on?.("ping", alive);
    // A server that takes the connection and never answers the upgrade, or never says ready,
    // would otherwise hold this attempt until the operating system gives up on it, if ever.
    const handshake = setTimeout(() => ws.close(4001, "the relay did not get ready in time"), options.handshakeTimeoutMs ?? 15_000);
    return new Promise((resolve) => {
      let wasReady = false;
      const onStop = () => ws.close(1000, "closed by the client");
      stopping.signal.addEventListener("abort", onStop, { once: true });
      ws.onopen = alive;
      ws.onmessage = ({ data }) => {
        alive();
        let frame: { type?: string; event?: AgentlineEvent; code?: string; message?: string };
        try {
          frame = JSON.parse(String(data));
        } catch {
          return;
        }
        if (frame.type === "ready") {
          clearTimeout(handshake);
          wasReady = true;
          setStatus("open");
          markReady();
          if (unsentAcks.size > 0) {
            ws.send(JSON.stringify({ type: "ack", event_ids: [...unsentAcks] }));
            unsentAcks.clear();
          }
        } else if (frame.type === "event" && frame.event) {
          hand(frame.event);
        } else if (frame.type === "error") {
          report(new Error(`relay: ${frame.code}: ${frame.message}`));
        }
      };
      ws.onerror = () => {};
      ws.onclose = ({ code }) => {
        clearTimeout(handshake);
        clearTimeout(watchdog);
        stopping.signal.removeEventListener("abort", onStop);
        if (socket === ws) socket = undefined;
        resolve({ code, wasReady });
      };
    });
  };

  const held = (async () => {
    const Socket = options.WebSocket ?? (await defaultSocket());
    for (let attempt = 0; !stopping.signal.aborted; ) {
      setStatus(attempt === 0 && status === "connecting" ? "connecting" : "reconnecting");
      try {
        const { code, wasReady } = await connectOnce(Socket);
        if (code === REPLACED) throw new RelayGaveUp("a newer relay connection for this agent replaced this one (close code 4000)");
        if (code === CREDENTIAL_REVOKED) throw new RelayGaveUp("the API key this relay connection was opened with was revoked (close code 4401)");
        attempt = wasReady ? 0 : attempt + 1;
      } catch (error) {
        // A key that no longer works or an agent that is gone will not get better by retrying.
        if (error instanceof RelayGaveUp || (error instanceof AgentlineError && [401, 403, 404].includes(error.status))) {
          report(error);
          break;
        }
        attempt += 1;
      }
      if (stopping.signal.aborted) break;
      setStatus("reconnecting");
      await sleep(Math.random() * Math.min(max, initial * 2 ** attempt), stopping.signal);
    }
    stopping.abort();
    setStatus("closed");
    markReady();
  })();

  return {
    ready,
    get status() {
      return status;
    },
    async close() {
      // Handlers already running finish and are acknowledged on the open socket, then it closes.
      closing = true;
      await Promise.all(runningHandlers);
      stopping.abort();
      await held;
    },
  };
}

/** The relay stopped for good. */
export class RelayGaveUp extends Error {
  override name = "RelayGaveUp";
}
