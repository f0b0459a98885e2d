import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agentline, type AgentlineEvent, onTurn, unwrap } from "@agentline/sdk";
import { PGlite } from "@electric-sql/pglite";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, inject, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { events } from "../../core/db/schema/events.js";
import { createLogger } from "../../core/logger.js";
import { type RunningServer, startServer } from "../../gateway/server.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { freshDatabase, onPostgres, startTestService } from "../support/service.js";
import { startTcpProxy } from "../support/tcp-proxy.js";

/** Waits until check() returns something other than undefined/false. */
async function eventually<T>(check: () => Promise<T> | T, what: string, ms = 20_000): Promise<Exclude<T, false | undefined | null>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | undefined | null>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A service that can be stopped and started again on the same database (a PGlite directory, or
 * a PostgreSQL database), behind a proxy whose address the clients keep.
 */
async function restartableService(env: Record<string, string> = {}) {
  const cleanup: Array<() => Promise<void> | void> = [];
  let database: Record<string, string>;
  if (onPostgres) {
    const db = await freshDatabase();
    database = { DATABASE_URL: db.url! };
    cleanup.push(db.drop);
  } else {
    const dir = mkdtempSync(join(tmpdir(), "agentline-restart-"));
    const seeded = await PGlite.create({ dataDir: dir, loadDataDir: new Blob([readFileSync(inject("pgliteTemplate"))]) });
    await seeded.close();
    database = { DATA_DIR: dir };
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  }
  const proxy = await startTcpProxy(1);
  const start = () =>
    startServer(loadConfig({ PORT: "0", LOG_LEVEL: "silent", BASE_URL: proxy.url, TURN_TIMEOUT_MS: "60000", ...database, ...env }), {
      logger: createLogger("silent"),
    });
  let server: RunningServer = await start();
  proxy.retarget(server.port);
  return {
    proxy,
    get core() {
      return server.core;
    },
    /** The service itself, not through the proxy (for requests a dropped connection must not hit). */
    get directUrl() {
      return `http://127.0.0.1:${server.port}`;
    },
    async restart() {
      await server.close();
      server = await start();
      proxy.retarget(server.port);
    },
    async stop() {
      await server.close();
      await proxy.close();
      for (const step of cleanup.reverse()) await step();
    },
  };
}

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** Counts how often each event id is handed to a handler. */
function tally() {
  const handed = new Map<string, number>();
  const types: string[] = [];
  return {
    handed,
    types,
    see(event: AgentlineEvent) {
      handed.set(event.event_id, (handed.get(event.event_id) ?? 0) + 1);
      types.push(event.event_type);
    },
  };
}

async function setUp(env: Record<string, string> = {}) {
  const service = await restartableService(env);
  stops.push(() => service.stop());
  const account = await createAccount(service.core);
  const agentline = new Agentline({ baseUrl: service.proxy.url, apiKey: account.apiKey });
  const agent = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Restart-proof" } }));
  const number = unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agent.agent_id } }));
  const allEvents = () => service.core.db.select({ id: events.eventId, status: events.status }).from(events).where(eq(events.agentId, agent.agent_id));
  return { service, agentline, account, agentId: agent.agent_id, phoneNumber: number.phone_number, allEvents };
}

describe("the SDK's relay client", () => {
  it("drops a connection the server takes but never answers, and tries again", { timeout: 30_000 }, async () => {
    // A server that accepts TCP connections and says nothing: no upgrade, no ready.
    const held: Socket[] = [];
    const silent = createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    stops.push(async () => {
      held.forEach((socket) => socket.destroy());
      await new Promise((resolve) => silent.close(resolve));
    });
    const url = `ws://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/events/ws?agent_id=agt_x`;
    const statuses: string[] = [];
    const connection = new Agentline({ baseUrl: "http://127.0.0.1:1", apiKey: "sk_unused" }).relay(
      "agt_x",
      {},
      { url: async () => url, handshakeTimeoutMs: 200, backoff: { initialMs: 10, maxMs: 20 }, onStatus: (s) => statuses.push(s) },
    );
    await eventually(() => held.length >= 3, "a third attempt");
    expect(statuses).toContain("reconnecting");
    expect(connection.status).not.toBe("open");
    await connection.close();
    expect(connection.status).toBe("closed");
  });

  it("keeps answering a call across a server restart: no event lost, none handed twice", { timeout: 90_000 }, async () => {
    const { service, agentline, agentId, allEvents } = await setUp();
    const seen = tally();
    const connection = agentline.relay(
      agentId,
      {
        ...onTurn(async (turn) => {
          seen.see(turn.event);
          return `You said: ${turn.text}`;
        }),
        "*": (event) => seen.see(event),
      },
      { backoff: { initialMs: 50, maxMs: 400 } },
    );
    stops.unshift(() => connection.close());
    await connection.ready;
    const call = unwrap(await agentline.api.POST("/v1/calls", { body: { agent_id: agentId, to_number: "+14155550142" } }));
    const say = async (text: string) =>
      unwrap(await agentline.api.POST("/v1/sandbox/calls/{call_id}/say", { params: { path: { call_id: call.call_id } }, body: { text } }));
    const transcript = async () =>
      unwrap(await agentline.api.GET("/v1/calls/{call_id}/transcript", { params: { path: { call_id: call.call_id } } })).map((l) => `${l.role}: ${l.text}`);

    await say("before the restart");
    await eventually(async () => (await transcript()).includes("assistant: You said: before the restart"), "the first answer");

    await service.restart();
    // Said at once, most likely before the client has reconnected: it must wait for it.
    await say("after the restart");
    await eventually(async () => (await transcript()).includes("assistant: You said: after the restart"), "the answer after the restart");
    unwrap(await agentline.api.POST("/v1/calls/{call_id}/hangup", { params: { path: { call_id: call.call_id } } }));
    await eventually(() => seen.types.includes("call.completed"), "call.completed");

    const stored = await eventually(async () => {
      const rows = await allEvents();
      return rows.every((r) => r.status === "delivered") && rows;
    }, "every event acknowledged");
    expect([...seen.handed.keys()].sort()).toEqual(stored.map((r) => r.id).sort());
    expect([...seen.handed.values()].every((n) => n === 1)).toBe(true);
    expect(seen.types.filter((t) => t === "call.utterance")).toHaveLength(2);
    expect(await transcript()).toEqual([
      "user: before the restart",
      "assistant: You said: before the restart",
      "user: after the restart",
      "assistant: You said: after the restart",
    ]);
  });

  it("survives dropped sockets, including one dropped before its ack: every event handed once and acknowledged", { timeout: 90_000 }, async () => {
    // A short ack timeout: the server also sends events again while their handlers still run.
    const { service, agentline, account, agentId, phoneNumber, allEvents } = await setUp({ RELAY_ACK_TIMEOUT_MS: "300" });
    const seen = tally();
    const statuses: string[] = [];
    const connection = agentline.relay(
      agentId,
      {
        "sms.received": async (event) => {
          seen.see(event);
          // Slow enough that the socket is cut while the handler runs, before its ack.
          await new Promise((r) => setTimeout(r, 800));
        },
      },
      { backoff: { initialMs: 50, maxMs: 300 }, onStatus: (s) => statuses.push(s) },
    );
    stops.unshift(() => connection.close());
    await connection.ready;
    const direct = new Agentline({ baseUrl: service.directUrl, apiKey: account.apiKey });
    const text = async (body: string) =>
      unwrap(await direct.api.POST("/v1/sandbox/inbound/sms", { body: { to_number: phoneNumber, from_number: "+14155550150", text: body } }));

    await text("first");
    await eventually(() => seen.handed.size === 1, "the first text handed");
    service.proxy.dropAll();
    await text("while the socket is down");
    await eventually(() => seen.handed.size === 2, "the second text after reconnecting");
    service.proxy.dropAll();
    await text("third");
    service.proxy.dropAll();

    const stored = await eventually(async () => {
      const rows = await allEvents();
      return rows.length === 3 && rows.every((r) => r.status === "delivered") && rows;
    }, "all three texts acknowledged");
    expect([...seen.handed.keys()].sort()).toEqual(stored.map((r) => r.id).sort());
    expect([...seen.handed.values()]).toEqual([1, 1, 1]);
    expect(statuses.filter((s) => s === "reconnecting").length).toBeGreaterThanOrEqual(2);
  });

  it("gives up, and says why, when the API key stops working", { timeout: 30_000 }, async () => {
    const service = await startTestService();
    stops.push(() => service.stop());
    const errors: unknown[] = [];
    const connection = new Agentline({ baseUrl: service.baseUrl, apiKey: "sk_revoked" }).relay("agt_x", {}, { onError: (e) => errors.push(e) });
    await connection.ready;
    expect(connection.status).toBe("closed");
    expect(errors).toEqual([expect.objectContaining({ status: 401, code: "unauthorized" })]);
  });

  it("gives up at once, saying so, when the key it connects with is revoked (close code 4401)", { timeout: 30_000 }, async () => {
    const service = await startTestService();
    stops.push(() => service.stop());
    const account = await createAccount(service.core);
    const owner = new Api(service.baseUrl, account.apiKey);
    const spare = (await owner.post("/v1/auth/keys", { name: "relay" })).body;
    const agentId = (await owner.post("/v1/agents", { name: "relay" })).body.agent_id;
    const errors: unknown[] = [];
    const connection = new Agentline({ baseUrl: service.baseUrl, apiKey: spare.api_key }).relay(agentId, {}, { onError: (e) => errors.push(e) });
    await connection.ready;
    expect(connection.status).toBe("open");
    expect((await owner.delete(`/v1/auth/keys/${spare.key_id}`)).status).toBe(200);
    await eventually(() => connection.status === "closed", "the relay giving up");
    expect(errors).toEqual([expect.objectContaining({ name: "RelayGaveUp", message: expect.stringContaining("revoked (close code 4401)") })]);
  });
});
