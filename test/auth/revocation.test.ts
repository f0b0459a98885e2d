import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { mintAgentToken } from "../../core/auth/agent-tokens.js";
import { mintApiKey } from "../../core/auth/api-keys.js";
import { CREDENTIAL_REVOKED_CHANNEL, listenForRevocations, revokeCredential, revokedLately, watchCredential } from "../../core/auth/revocation.js";
import type { Bus } from "../../core/bus.js";
import type { Core } from "../../core/context.js";
import { agentTokens } from "../../core/db/schema/agent-tokens.js";
import { apiKeys } from "../../core/db/schema/api-keys.js";
import { oauthConnections } from "../../core/db/schema/oauth-connections.js";
import { relayTickets } from "../../core/db/schema/relay-tickets.js";
import { newId } from "../../core/ids.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

// One process's memory of revoked credentials (core/auth/revocation.ts): who watches a credential
// hears of its revoke once; a revoke heard lately is remembered for five minutes, at most 10,000
// of them; after the bus reconnects, the database is asked which watched credentials were revoked
// meanwhile. How sockets and waits end when their credential is revoked, across processes, is in
// test/hostile/revocation.test.ts.

let service: TestService;
let account: TestAccount;
beforeAll(async () => {
  service = await startTestService();
  account = await createAccount(service.core);
});
afterAll(() => service?.stop());
afterEach(() => vi.restoreAllMocks());

/** The service's core with a bus of its own, whose announcements and reconnects the test makes. */
function coreWithBus() {
  const handlers = new Map<string, Array<(message: Record<string, unknown>) => void>>();
  const reconnects: Array<() => void> = [];
  const published: Array<{ channel: string; message: Record<string, unknown>; inTransaction: boolean }> = [];
  const bus: Bus = {
    async publish(channel, message, options) {
      published.push({ channel, message, inTransaction: options?.tx !== undefined });
    },
    subscribe(channel, handler) {
      handlers.set(channel, [...(handlers.get(channel) ?? []), handler]);
      return () => {};
    },
    announce() {},
    onReconnect(handler) {
      reconnects.push(handler);
      return () => {};
    },
    async close() {},
  };
  const core: Core = { ...service.core, bus };
  listenForRevocations(core);
  return {
    core,
    published,
    /** The revoke of credentialId, as another process announces it. */
    hear: (credentialId: string) => handlers.get(CREDENTIAL_REVOKED_CHANNEL)?.forEach((handle) => handle({ credential_id: credentialId })),
    reconnect: () => reconnects.forEach((handle) => handle()),
  };
}

/** Lets queued microtasks and the database reads of a recheck run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe("watching a credential", () => {
  it("calls back once when its revoke is heard, and not for another credential's", async () => {
    const { core, hear } = coreWithBus();
    const onRevoked = vi.fn();
    const other = vi.fn();
    watchCredential(core, "key_a", onRevoked);
    watchCredential(core, "key_b", other);
    hear("key_a");
    hear("key_a");
    await settle();
    expect(onRevoked).toHaveBeenCalledTimes(1);
    expect(other).not.toHaveBeenCalled();
  });

  it("calls every watcher of the credential, except one that stopped watching", async () => {
    const { core, hear } = coreWithBus();
    const first = vi.fn();
    const second = vi.fn();
    const stopped = vi.fn();
    watchCredential(core, "key_a", first);
    watchCredential(core, "key_a", second);
    watchCredential(core, "key_a", stopped)();
    hear("key_a");
    expect(first).toHaveBeenCalledTimes(1);
    expect(second).toHaveBeenCalledTimes(1);
    expect(stopped).not.toHaveBeenCalled();
  });

  it("stopping the last watcher forgets the credential; a new watcher is called on the next revoke", () => {
    const { core, hear } = coreWithBus();
    const stop = watchCredential(core, "key_a", vi.fn());
    stop();
    stop();
    const later = vi.fn();
    watchCredential(core, "key_a", later);
    hear("key_a");
    expect(later).toHaveBeenCalledTimes(1);
  });

  it("a watcher that stops after the revoke it heard leaves the credential's later watchers in place", () => {
    const { core, hear } = coreWithBus();
    const start = Date.now();
    const now = vi.spyOn(Date, "now").mockReturnValue(start);
    const first = vi.fn();
    const stopFirst = watchCredential(core, "key_a", first);
    hear("key_a");
    // Past the memory of that revoke, a new watcher waits for the next one.
    now.mockReturnValue(start + 5 * 60_000);
    const later = vi.fn();
    watchCredential(core, "key_a", later);
    stopFirst();
    hear("key_a");
    expect(first).toHaveBeenCalledTimes(1);
    expect(later).toHaveBeenCalledTimes(1);
  });

  it("a credential revoked lately calls back at once (in a microtask), once, unless unwatched first", async () => {
    const { core, hear } = coreWithBus();
    hear("key_a");
    const onRevoked = vi.fn();
    watchCredential(core, "key_a", onRevoked);
    expect(onRevoked).not.toHaveBeenCalled();
    await settle();
    expect(onRevoked).toHaveBeenCalledTimes(1);
    hear("key_b");
    const unwatched = vi.fn();
    watchCredential(core, "key_b", unwatched)();
    await settle();
    expect(unwatched).not.toHaveBeenCalled();
  });
});

describe("revokes heard lately", () => {
  it("are remembered for five minutes, counted from the last time one was heard", () => {
    const { core, hear } = coreWithBus();
    const start = Date.now();
    const now = vi.spyOn(Date, "now").mockReturnValue(start);
    expect(revokedLately(core, "key_a")).toBe(false);
    hear("key_a");
    expect(revokedLately(core, "key_a")).toBe(true);
    expect(revokedLately(core, "key_b")).toBe(false);
    now.mockReturnValue(start + 5 * 60_000 - 1);
    expect(revokedLately(core, "key_a")).toBe(true);
    now.mockReturnValue(start + 5 * 60_000);
    expect(revokedLately(core, "key_a")).toBe(false);
    hear("key_a");
    now.mockReturnValue(start + 10 * 60_000 - 1);
    expect(revokedLately(core, "key_a")).toBe(true);
    now.mockReturnValue(start + 10 * 60_000);
    expect(revokedLately(core, "key_a")).toBe(false);
  });

  it("a watcher of a credential revoked more than five minutes ago waits for a new revoke", async () => {
    const { core, hear } = coreWithBus();
    const start = Date.now();
    const now = vi.spyOn(Date, "now").mockReturnValue(start);
    hear("key_a");
    now.mockReturnValue(start + 5 * 60_000);
    const onRevoked = vi.fn();
    watchCredential(core, "key_a", onRevoked);
    await settle();
    expect(onRevoked).not.toHaveBeenCalled();
    hear("key_a");
    expect(onRevoked).toHaveBeenCalledTimes(1);
  });

  it("are at most 10,000: the oldest is forgotten first, one heard again counts as new", () => {
    const { core, hear } = coreWithBus();
    vi.spyOn(Date, "now").mockReturnValue(Date.now());
    for (let i = 0; i < 10_000; i++) hear(`key_${i}`);
    expect(revokedLately(core, "key_0")).toBe(true);
    hear("key_0");
    hear("key_new");
    expect(revokedLately(core, "key_1")).toBe(false);
    expect(revokedLately(core, "key_0")).toBe(true);
    expect(revokedLately(core, "key_2")).toBe(true);
    expect(revokedLately(core, "key_new")).toBe(true);
  });

  it("older than five minutes are dropped as a new one is heard, the new one kept", () => {
    const { core, hear } = coreWithBus();
    const start = Date.now();
    const now = vi.spyOn(Date, "now").mockReturnValue(start);
    for (let i = 0; i < 10_000; i++) hear(`key_${i}`);
    now.mockReturnValue(start + 5 * 60_000);
    hear("key_new");
    // All the old ones went: the next 9,999 fit without forgetting any of them.
    for (let i = 0; i < 9_999; i++) hear(`fresh_${i}`);
    expect(revokedLately(core, "key_new")).toBe(true);
    expect(revokedLately(core, "fresh_0")).toBe(true);
    expect(revokedLately(core, "fresh_9998")).toBe(true);
  });
});

describe("after the bus reconnects", () => {
  it("asks the database, and calls back the watchers of keys, agent tokens and connections revoked meanwhile", async () => {
    const { core, reconnect } = coreWithBus();
    const { db } = service.core;
    const revokedKey = await mintApiKey(db, account.accountId, "revoked meanwhile");
    const liveKey = await mintApiKey(db, account.accountId, "still live");
    const revokedToken = await mintAgentToken(db, account.accountId, { kind: "api_key", id: account.keyId });
    const connectionId = newId("conn");
    await db.insert(oauthConnections).values({
      connectionId,
      accountId: account.accountId,
      clientId: "client",
      clientName: "A client",
      redirectHost: "localhost",
      scope: "calls",
      expiresAt: new Date(Date.now() + 60_000),
    });
    const watchers = {
      key: vi.fn(),
      live: vi.fn(),
      token: vi.fn(),
      connection: vi.fn(),
    };
    watchCredential(core, revokedKey.key_id, watchers.key);
    watchCredential(core, liveKey.key_id, watchers.live);
    watchCredential(core, revokedToken.token_id, watchers.token);
    watchCredential(core, connectionId, watchers.connection);
    // Revoked while the bus was away: no announcement reached this process.
    const at = new Date();
    await db.update(apiKeys).set({ revokedAt: at }).where(eq(apiKeys.keyId, revokedKey.key_id));
    await db.update(agentTokens).set({ revokedAt: at }).where(eq(agentTokens.tokenId, revokedToken.token_id));
    await db.update(oauthConnections).set({ revokedAt: at }).where(eq(oauthConnections.connectionId, connectionId));
    reconnect();
    await vi.waitFor(() => expect(watchers.connection).toHaveBeenCalledTimes(1));
    expect(watchers.key).toHaveBeenCalledTimes(1);
    expect(watchers.token).toHaveBeenCalledTimes(1);
    expect(watchers.live).not.toHaveBeenCalled();
    expect(revokedLately(core, revokedKey.key_id)).toBe(true);
    expect(revokedLately(core, liveKey.key_id)).toBe(false);
  });

  it("logs a recheck the database fails, and keeps the watchers for the next revoke", async () => {
    const { core, reconnect, hear } = coreWithBus();
    const onRevoked = vi.fn();
    watchCredential(core, "key_a", onRevoked);
    vi.spyOn(core.db, "select").mockImplementation(() => {
      throw new Error("the database is gone");
    });
    const logged = vi.spyOn(core.logger, "error").mockImplementation(() => {});
    reconnect();
    await vi.waitFor(() =>
      expect(logged).toHaveBeenCalledWith(
        expect.objectContaining({ err: expect.objectContaining({ message: "the database is gone" }) }),
        "rechecking watched credentials failed",
      ),
    );
    expect(onRevoked).not.toHaveBeenCalled();
    hear("key_a");
    expect(onRevoked).toHaveBeenCalledTimes(1);
  });

  it("asks nothing when nothing is watched", async () => {
    const { core, reconnect } = coreWithBus();
    const select = vi.spyOn(core.db, "select");
    watchCredential(core, "key_a", vi.fn())();
    reconnect();
    await settle();
    expect(select).not.toHaveBeenCalled();
  });
});

describe("revokeCredential", () => {
  it("deletes the relay tickets the credential minted, not others', and announces the revoke with the transaction", async () => {
    const { core, published } = coreWithBus();
    const agent = await new Api(service.baseUrl, account.apiKey).post("/v1/agents", { name: "tickets" });
    const ticket = (credentialId: string) => ({
      ticketHash: randomBytes(16).toString("hex"),
      accountId: account.accountId,
      agentId: agent.body.agent_id,
      credentialId,
      expiresAt: new Date(Date.now() + 60_000),
    });
    await service.core.db.insert(relayTickets).values([ticket("key_gone"), ticket("key_gone"), ticket("key_kept")]);
    await service.core.db.transaction((tx) => revokeCredential(core, tx, "key_gone"));
    const left = await service.core.db.select().from(relayTickets).where(eq(relayTickets.agentId, agent.body.agent_id));
    expect(left.map((t) => t.credentialId)).toEqual(["key_kept"]);
    expect(published).toEqual([{ channel: CREDENTIAL_REVOKED_CHANNEL, message: { credential_id: "key_gone" }, inTransaction: true }]);
  });
});
