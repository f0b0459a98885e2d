import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bus } from "../../core/bus.js";
import { relaySessions } from "../../core/db/schema/relay-sessions.js";
import { RELAY_SESSION_CHANNEL } from "../../core/events/channels.js";
import { isId } from "../../core/ids.js";
import { openRelaySession, touchRelaySession } from "../../core/relay/relay.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { RelayClient } from "../../harness/relay-client.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// The relay_sessions row is how every process knows which socket holds an agent's events.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { RELAY_ACK_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

const sessionRow = async (agentId: string) => (await service.core.db.select().from(relaySessions).where(eq(relaySessions.agentId, agentId)))[0];

describe("relay sessions", () => {
  it("records an open socket under a sess_ id, with its runtime and this process", async () => {
    const { agentId } = await agentWithNumber(api);
    const relay = await RelayClient.connect(service.baseUrl, { agent_id: agentId, runtime: "my-runtime" }, account.apiKey);
    const row = await sessionRow(agentId);
    expect(isId("sess", row!.sessionId)).toBe(true);
    expect(row).toMatchObject({ runtime: "my-runtime", processId: service.core.processId });
    await relay.close();
  });

  it("announces a new session with the transaction that writes its row, so no process hears of it before the row is there", async () => {
    const { agentId } = await agentWithNumber(api);
    const published: Array<{ channel: string; message: Record<string, unknown>; inTransaction: boolean }> = [];
    const bus: Bus = {
      ...service.core.bus,
      async publish(channel, message, options) {
        published.push({ channel, message, inTransaction: options?.tx !== undefined });
      },
    };
    const sessionId = await openRelaySession({ ...service.core, bus }, account.accountId, agentId, "test");
    expect(published).toEqual([{ channel: RELAY_SESSION_CHANNEL, message: { agent_id: agentId, session_id: sessionId }, inTransaction: true }]);
    expect((await sessionRow(agentId))?.sessionId).toBe(sessionId);
  });

  it("moves last_seen_at to the present when the holder touches its session (every ping)", async () => {
    const { agentId } = await agentWithNumber(api);
    const relay = await RelayClient.connect(service.baseUrl, { agent_id: agentId, runtime: "test" }, account.apiKey);
    const opened = (await sessionRow(agentId))!;
    const later = new Date(opened.lastSeenAt.getTime() + 30_000);
    const realNow = service.core.now;
    service.core.now = () => later;
    try {
      await touchRelaySession(service.core, agentId, opened.sessionId);
    } finally {
      service.core.now = realNow;
    }
    const touched = (await sessionRow(agentId))!;
    expect(touched.lastSeenAt.getTime()).toBe(later.getTime());
    expect(touched.connectedAt.getTime()).toBe(opened.connectedAt.getTime());
    await relay.close();
  });

  it("writes the touches of one tick together, each only on the session it names", async () => {
    const [a, b] = [await agentWithNumber(api), await agentWithNumber(api)];
    const relays = [
      await RelayClient.connect(service.baseUrl, { agent_id: a.agentId, runtime: "test" }, account.apiKey),
      await RelayClient.connect(service.baseUrl, { agent_id: b.agentId, runtime: "test" }, account.apiKey),
    ];
    const [rowA, rowB] = [(await sessionRow(a.agentId))!, (await sessionRow(b.agentId))!];
    const later = new Date(Math.max(rowA.lastSeenAt.getTime(), rowB.lastSeenAt.getTime()) + 30_000);
    const realNow = service.core.now;
    service.core.now = () => later;
    try {
      // A's own session, and B's agent under a session id that is not B's (a replaced socket's).
      const first = touchRelaySession(service.core, a.agentId, rowA.sessionId);
      const second = touchRelaySession(service.core, b.agentId, "sess_replaced");
      expect(second).toBe(first);
      await first;
    } finally {
      service.core.now = realNow;
    }
    expect((await sessionRow(a.agentId))!.lastSeenAt.getTime()).toBe(later.getTime());
    expect((await sessionRow(b.agentId))!.lastSeenAt.getTime()).toBe(rowB.lastSeenAt.getTime());
    await Promise.all(relays.map((relay) => relay.close()));
  });
});
