import type { WebSocket } from "ws";
import type { Core } from "../../core/context.js";
import { EVENTS_CREATED_CHANNEL, RELAY_SESSION_CHANNEL } from "../../core/events/channels.js";
import type { EventEnvelope } from "../../core/events/schemas.js";
import { ackRelayEvents, closeRelaySession, openRelaySession, RUNTIME_PATTERN, relayBacklog, touchRelaySession } from "../../core/relay/relay.js";
import { readClientFrame } from "../../core/schemas/client-frames.js";
import { SocketsByKey } from "../../core/sockets-by-key.js";
import { SocketAcceptor } from "./accept.js";
import type { AccountSockets } from "./account-sockets.js";
import { closeOnRevoke } from "./close-on-revoke.js";
import { relayUpgradeAccount } from "./relay-auth.js";
import { UpgradeRefusal, type UpgradeRoute } from "./upgrades.js";

/** Close code for a socket that a newer socket of the same agent replaced. */
export const REPLACED = 4000;
/** Close code for a socket whose API key (or the key that minted its ticket) was revoked: 4401, in close-on-revoke.ts. */
export { CREDENTIAL_REVOKED } from "./close-on-revoke.js";

/**
 * The relay, `/v1/events/ws?agent_id=&runtime=`: an agent's events, live and durable until
 * acknowledged. Opened with an API key header or a single-use `ticket` (relay-auth.ts). Server frames: `{type:"ready",agent_id,runtime,protocol}` then
 * `{type:"event",event}`; client frames: `{type:"ack",event_id}` or `{type:"ack",event_ids:[...]}`.
 */
export function relayRoute(core: Core, accountSockets: AccountSockets): UpgradeRoute {
  const acceptor = new SocketAcceptor("relay", 256 * 1024, core.logger);
  const sockets = new SocketsByKey<RelaySocket>();
  const unsubscribe = [
    core.bus.subscribe(EVENTS_CREATED_CHANNEL, (m) => sockets.each(m.agent_id, (s) => s.offer(m))),
    core.bus.subscribe(RELAY_SESSION_CHANNEL, (m) => sockets.each(m.agent_id, (s) => s.replacedBy(String(m.session_id)))),
    // Announcements sent while the bus was reconnecting were missed: every socket looks now.
    core.bus.onReconnect(() => sockets.all((s) => s.pump())),
  ];
  const track = (socket: RelaySocket) => {
    const untrack = sockets.track(socket.agentId, socket);
    core.metrics.relaySockets.inc();
    return () => {
      core.metrics.relaySockets.dec();
      untrack();
    };
  };
  return {
    pattern: /^\/v1\/events\/ws$/,
    async handle(req, socket, head) {
      const query = new URL(req.url ?? "/", "http://localhost").searchParams;
      // A ticket is spent as it is read: a URL that could not open a relay is refused before that.
      if (query.has("ticket")) relayTarget(query);
      const { accountId, credentialId } = await relayUpgradeAccount(core, req);
      const { agentId, runtime } = relayTarget(query);
      // The agent's socket here, if it has one, is replaced as this one opens: its place passes on.
      let replacing = 0;
      sockets.each(agentId, (s) => (replacing += s.replaced ? 0 : 1));
      const release = accountSockets.hold(accountId, socket, replacing);
      const sessionId = await openRelaySession(core, accountId, agentId, runtime);
      acceptor.accept(req, socket, head, (ws) => {
        closeOnRevoke(core, ws, credentialId);
        const relay = new RelaySocket(core, ws, agentId, runtime, sessionId, release);
        relay.start(track(relay));
      });
    },
    close() {
      unsubscribe.forEach((off) => off());
      acceptor.closeAll();
    },
  };
}

/** The agent and runtime a relay URL names, or the 422 saying what is wrong with it. */
function relayTarget(query: URLSearchParams): { agentId: string; runtime: string } {
  const agentId = query.get("agent_id");
  const runtime = query.get("runtime") ?? "generic";
  if (!agentId) throw new UpgradeRefusal("validation_error", "agent_id is required: /v1/events/ws?agent_id=agt_...");
  if (!RUNTIME_PATTERN.test(runtime)) throw new UpgradeRefusal("validation_error", "runtime must match [a-z0-9_-]{1,32}.");
  return { agentId, runtime };
}

/** One open relay socket: what it has in flight, its timers, its subscriptions. */
class RelaySocket {
  /** event_id → when it was last sent. Bounded by RELAY_WINDOW, so a slow client costs little. */
  private readonly inFlight = new Map<string, number>();
  /** Ids the client acknowledged lately (their ack may not be committed yet): sent, as far as ordering goes. */
  private readonly acked = new Set<string>();
  /** Whether pending events may be waiting that this socket has not sent: an ack then reads the backlog. */
  private behind = true;
  private pumping = false;
  private pumpAgain = false;
  private alive = true;
  /** Whether a newer socket of the agent took over (this one is closing). */
  replaced = false;
  private readonly cleanup: Array<() => void> = [];

  constructor(
    private readonly core: Core,
    private readonly ws: WebSocket,
    readonly agentId: string,
    private readonly runtime: string,
    private readonly sessionId: string,
    /** Gives back this socket's place among the account's sockets. */
    private readonly releasePlace: () => void,
  ) {}

  start(untrack: () => void): void {
    const { core, ws, agentId } = this;
    this.send({ type: "ready", agent_id: agentId, runtime: this.runtime, protocol: "service-relay/1" });
    this.cleanup.push(untrack);
    const { relayAckTimeoutMs, relayPingMs } = core.config;
    const resend = setInterval(() => this.resendUnacked(), Math.max(50, Math.min(1_000, relayAckTimeoutMs / 4)));
    // Each socket beats from a random point of the interval: sockets opened together (after a
    // restart, every one) would otherwise ping, touch their sessions and read their backlogs all
    // at once, a burst of database work beside the live turns, every interval.
    let ping: NodeJS.Timeout | undefined;
    const firstBeat = setTimeout(() => {
      this.heartbeat();
      ping = setInterval(() => this.heartbeat(), relayPingMs);
    }, Math.random() * relayPingMs);
    this.cleanup.push(
      () => clearInterval(resend),
      () => clearTimeout(firstBeat),
      () => clearInterval(ping),
    );
    ws.on("pong", () => (this.alive = true));
    ws.on("message", (data) => this.onFrame(String(data)));
    ws.on("close", () => {
      this.cleanup.forEach((stop) => stop());
      closeRelaySession(core, agentId, this.sessionId).catch((error) => core.logger.error({ err: error }, "closing relay session failed"));
    });
    this.pump();
  }

  /** A newer socket for the agent opened (in this process or another): this one gives way. */
  replacedBy(sessionId: string): void {
    if (sessionId === this.sessionId) return;
    // Its close handshake may take a while; the account's place is the newer socket's now.
    this.replaced = true;
    this.releasePlace();
    this.ws.close(REPLACED, "replaced by a newer connection");
  }

  private send(frame: Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(frame));
  }

  /**
   * A new event of the agent, committed. Sent at once when it carries its envelope and every
   * earlier pending event of the agent (`before`) has already been sent here, so the client still
   * gets them in sequence order; otherwise the backlog is read, in order.
   */
  offer(message: Record<string, unknown>): void {
    const event = message.event as EventEnvelope | undefined;
    const before = message.before;
    if (!event || typeof event.event_id !== "string" || !Array.isArray(before)) return this.pump();
    if (this.wasSent(event.event_id)) return;
    const inOrder = before.every((id) => this.wasSent(id));
    if (!inOrder || this.inFlight.size >= this.core.config.relayWindow || this.ws.readyState !== this.ws.OPEN) {
      this.behind = true;
      return this.pump();
    }
    this.inFlight.set(event.event_id, Date.now());
    this.send({ type: "event", event });
  }

  /** Sends pending events, oldest first, while the window has room. */
  pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void (async () => {
      try {
        do {
          this.pumpAgain = false;
          const room = this.core.config.relayWindow - this.inFlight.size;
          if (room <= 0 || this.ws.readyState !== this.ws.OPEN) break;
          const backlog = await relayBacklog(this.core, this.agentId, [...this.inFlight.keys()], room);
          for (const event of backlog) {
            // Offered from memory while the backlog was being read (and perhaps acked since).
            if (this.wasSent(event.event_id)) continue;
            this.inFlight.set(event.event_id, Date.now());
            this.send({ type: "event", event });
          }
          this.behind = backlog.length === room;
          if (this.behind) this.pumpAgain = true;
        } while (this.pumpAgain);
      } catch (error) {
        this.core.logger.error({ err: error, agent_id: this.agentId }, "relay pump failed");
      } finally {
        this.pumping = false;
      }
    })();
  }

  /** Events unacknowledged past the ack timeout are sent again. */
  private resendUnacked(): void {
    const { relayAckTimeoutMs } = this.core.config;
    const overdue = [...this.inFlight].filter(([, sentAt]) => Date.now() - sentAt >= relayAckTimeoutMs).map(([id]) => id);
    if (overdue.length === 0) return;
    // Drop them from the window and pump: the backlog query re-reads them (if still pending).
    for (const id of overdue) this.inFlight.delete(id);
    this.pump();
  }

  /**
   * Whether this socket has sent the event already: in flight, or acknowledged. An ack can commit
   * while a backlog read that still saw the event pending is on its way, or before another
   * process's announcement of it arrives; either would otherwise send it a second time.
   */
  private wasSent(id: string): boolean {
    return this.inFlight.has(id) || this.acked.has(id);
  }

  private rememberAcked(id: string): void {
    this.acked.add(id);
    // Enough to cover acks not yet committed; the oldest is forgotten first.
    if (this.acked.size > 2 * this.core.config.relayWindow) this.acked.delete(this.acked.values().next().value!);
  }

  private heartbeat(): void {
    if (!this.alive) {
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
    // A safety net: a bus message lost in a reconnect would otherwise leave events waiting.
    this.pump();
    touchRelaySession(this.core, this.agentId, this.sessionId).catch((error) => this.core.logger.error({ err: error }, "relay heartbeat failed"));
  }

  private onFrame(data: string): void {
    const read = readClientFrame(data);
    if ("error" in read) return this.send(read.error);
    const frame = read.frame;
    if (frame.type !== "ack")
      return this.send({ type: "error", code: "validation_error", message: 'the only client frame is {"type":"ack","event_id"} (or event_ids)' });
    const ids = Array.isArray(frame.event_ids) ? frame.event_ids : [frame.event_id];
    if (ids.length === 0 || ids.length > 1000 || !ids.every((id) => typeof id === "string" && id.length <= 64)) {
      return this.send({ type: "error", code: "validation_error", message: "ack needs event_id, or event_ids (1 to 1000 ids)" });
    }
    for (const id of ids as string[]) this.rememberAcked(id);
    ackRelayEvents(this.core, this.agentId, ids as string[])
      .then(() => {
        for (const id of ids as string[]) this.inFlight.delete(id);
        // Only a socket that may have left events unsent reads its backlog after an ack.
        if (this.behind) this.pump();
      })
      .catch((error) => {
        // Not recorded: the events are still pending, to be sent again once their ack times out.
        for (const id of ids as string[]) this.acked.delete(id);
        this.core.logger.error({ err: error }, "relay ack failed");
      });
  }
}
