import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { RelayClient } from "../../harness/relay-client.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { RawWebSocket } from "../support/raw-websocket.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { waitFor } from "../support/twilio/service.js";

// One client holding many connections open: an account's WebSockets are capped
// (ACCOUNT_MAX_SOCKETS), and so are one address's TCP connections (IP_MAX_CONNECTIONS).

/** The refusal of an upgrade opened with RawWebSocket: its status and problem body. */
async function refusal(open: Promise<unknown>): Promise<{ status: number; body: any }> {
  const error = (await open.then(
    () => {
      throw new Error("the upgrade was accepted");
    },
    (e: unknown) => e,
  )) as { status: number; body: string };
  return { status: error.status, body: JSON.parse(error.body) };
}

describe("the per-account socket limit (ACCOUNT_MAX_SOCKETS=3)", () => {
  let service: TestService;
  let guest: Bystander;

  beforeAll(async () => {
    service = await startTestService({ env: { ACCOUNT_MAX_SOCKETS: "3" } });
    guest = await bystander(service);
  });
  afterAll(() => service?.stop());

  const wsUrl = (path: string) => `${service.baseUrl.replace(/^http/, "ws")}${path}`;
  const relay = (account: TestAccount, agentId: string) => RelayClient.connect(service.baseUrl, { agent_id: agentId }, account.apiKey);
  /** A relay socket of a client that never answers the server's close frame. */
  const rawRelay = (account: TestAccount, agentId: string) =>
    RawWebSocket.open(wsUrl(`/v1/events/ws?agent_id=${agentId}`), { Authorization: `Bearer ${account.apiKey}` });
  const rawSoftphone = (account: TestAccount, callId: string) =>
    RawWebSocket.open(wsUrl(`/v1/sandbox/calls/${callId}/ws`), { Authorization: `Bearer ${account.apiKey}` });
  const newAccount = async () => {
    const account = await createAccount(service.core);
    const api = new Api(service.baseUrl, account.apiKey);
    const agents = await Promise.all([1, 2, 3, 4, 5].map(() => agentWithNumber(api)));
    return { account, api, agentIds: agents.map((a) => a.agentId) };
  };

  it("counts relay and softphone sockets together, refuses the next with a 429 naming account_sockets, and leaves other accounts be", async () => {
    const { account, api, agentIds } = await newAccount();
    const callId = await answeredCall(api, agentIds[0]!);
    const open = [await relay(account, agentIds[0]!), await relay(account, agentIds[1]!), await Softphone.connect(service.baseUrl, callId, account.apiKey)];

    const during = guest.check();
    const refused = await refusal(rawRelay(account, agentIds[2]!));
    expect(refused).toMatchObject({ status: 429, body: { code: "limit_reached", limit: "account_sockets", max: 3 } });
    expect((await refusal(rawSoftphone(account, callId))).body).toMatchObject({ limit: "account_sockets" });
    await during;

    // Another account is not held to this one's count.
    const other = await newAccount();
    const theirs = await Promise.all(other.agentIds.slice(0, 3).map((agentId) => relay(other.account, agentId)));
    expect(theirs.every((socket) => socket.frames[0]?.type === "ready")).toBe(true);

    // Closing one frees its place.
    await open[1]!.close();
    const next = await relay(account, agentIds[2]!);
    await next.next((f) => f.type === "ready");
    await guest.check();
    await Promise.all([open[0]!, open[2]!, next, ...theirs].map((socket) => socket.close()));
  });

  it("lets a reconnecting agent take over its socket's place at the limit, and the replaced socket counts no more", async () => {
    const { account, agentIds } = await newAccount();
    // The first socket's client will not answer the close frame: ws would wait 30 s before dropping it.
    const stale = await rawRelay(account, agentIds[0]!);
    const others = [await relay(account, agentIds[1]!), await relay(account, agentIds[2]!)];
    expect((await refusal(rawRelay(account, agentIds[3]!))).status).toBe(429);

    const replacement = await relay(account, agentIds[0]!);
    expect((await stale.ended).code).toBe(4000);
    expect((await refusal(rawRelay(account, agentIds[3]!))).status).toBe(429);
    await others[0]!.close();
    // Three places: the replacement, others[1], and the one others[0] gave back; the stale socket holds none.
    const fourth = await relay(account, agentIds[3]!);
    expect((await refusal(rawRelay(account, agentIds[4]!))).body).toMatchObject({ code: "limit_reached", limit: "account_sockets", max: 3 });
    await guest.check();
    stale.reset();
    await Promise.all([replacement, others[1]!, fourth].map((socket) => socket.close()));
  });
});

describe("the per-address connection cap (IP_MAX_CONNECTIONS=4)", () => {
  let service: TestService;
  let guest: Bystander;
  let apiKey: string;

  beforeAll(async () => {
    service = await startTestService({ env: { IP_MAX_CONNECTIONS: "4" } });
    // The guest comes from 127.0.0.1; the hoarder below from 127.0.0.2, another address of loopback.
    guest = await bystander(service);
    apiKey = (await createAccount(service.core)).apiKey;
  });
  afterAll(() => service?.stop());

  const HOARDER = "127.0.0.2";
  const tcp = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port: service.port, localAddress: HOARDER }, () => resolve(socket));
      socket.once("error", reject);
    });
  /** Everything the server writes on a new connection before closing it (or within ms). */
  const answerTo = async (request: string | null, ms = 3_000): Promise<string> => {
    const socket = await tcp();
    socket.on("error", () => {});
    let text = "";
    socket.on("data", (chunk) => (text += chunk));
    if (request) socket.write(request);
    await Promise.race([new Promise((resolve) => socket.once("close", resolve)), new Promise((resolve) => setTimeout(resolve, ms))]);
    socket.destroy();
    return text;
  };
  const GET_HEALTH = "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

  it("refuses an address's connections beyond the cap with a 429 naming ip_connections, counting idle keep-alives and WebSockets, and answers again once they close", async () => {
    const held: Array<{ destroy(): void }> = [];
    // Two idle keep-alive connections, each after one request...
    for (let i = 0; i < 2; i++) {
      const socket = await tcp();
      let text = "";
      socket.on("data", (chunk) => (text += chunk));
      socket.write("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n");
      await waitFor(() => text.startsWith("HTTP/1.1 200"));
      held.push(socket);
    }
    // ...and two relay sockets.
    const api = new Api(service.baseUrl, apiKey);
    for (let i = 0; i < 2; i++) {
      const { agentId } = await agentWithNumber(api);
      const socket = await RawWebSocket.open(
        `${service.baseUrl.replace(/^http/, "ws")}/v1/events/ws?agent_id=${agentId}`,
        { Authorization: `Bearer ${apiKey}` },
        { localAddress: HOARDER },
      );
      held.push({ destroy: () => socket.reset() });
    }

    const during = guest.check();
    // A fifth is answered at once, before it sends anything, and closed.
    const answer = await answerTo(null);
    expect(answer).toMatch(/^HTTP\/1\.1 429 /);
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({ code: "limit_reached", limit: "ip_connections", max: 4 });
    await during;
    await guest.check();

    held.forEach((socket) => socket.destroy());
    let served = "";
    await waitFor(async () => (served = await answerTo(GET_HEALTH)).startsWith("HTTP/1.1 200"));
    expect(served).toContain('"status":"ok"');
    await guest.check();
  });
});
