import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { Contract } from "../../harness/contract.js";
import { answerTask, messageType, protocol2Call } from "../support/protocol2.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber } from "../support/telephony.js";

let service: TestService;
let account: TestAccount;
let api: Api;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());
beforeEach(async () => {
  receiver = await startReceiver(() => 202);
});
afterEach(() => receiver?.close());

// A task made stale by a newer utterance, and amended instead under supports_amend, with the
// session a runtime without capabilities gets: test/calls/turn-staleness.test.ts.
describe("protocol service-relay/2", () => {
  it("supports_cancel: an interruption sends call.task.cancel", async () => {
    const { phone } = await protocol2Call(api, receiver.url, ["supports_cancel"]);
    const turn = await phone.say("Tell me about your menu");
    const [, open] = await receiver.waitFor(2);
    phone.send({ type: "interrupt" });
    const [, , cancel] = await receiver.waitFor(3);
    expect(messageType(cancel!)).toBe("call.task.cancel");
    expect(cancel!.body).toMatchObject({ type: "call.task.cancel", task_id: turn, reason: "interrupted" });
    (await Contract.load(service.baseUrl)).checkWebhook("call.task.cancel", cancel!.body);
    expect((await answerTask(open!.body, "too late")).status).toBe(409);
  });

  it("briefing: session.start says who is calling, whether it is the owner, and the history with that number", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api, { owner_number: "+14155550111" });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550111", text: "Call me about the order" });
    const earlier = await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550111" });
    await api.post(`/v1/sandbox/calls/${earlier.body.call_id}/say`, { text: "First call" });
    await api.post(`/v1/sandbox/calls/${earlier.body.call_id}/hangup`);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities: ["briefing"] });
    const now = await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550111" });
    const [start] = await receiver.waitFor(1, (r) => messageType(r) === "call.session.start");
    expect(start!.body).toMatchObject({ call_id: now.body.call_id, direction: "inbound", is_owner_call: true });
    expect(start!.body.briefing.caller).toEqual({ number: "+14155550111", is_owner: true });
    expect(start!.body.briefing.recent_calls).toEqual([
      expect.objectContaining({
        call_id: earlier.body.call_id,
        status: "completed",
        last_lines: [expect.objectContaining({ role: "user", text: "First call" })],
      }),
    ]);
    expect(start!.body.briefing.recent_texts).toEqual([expect.objectContaining({ text: "Call me about the order" })]);
    (await Contract.load(service.baseUrl)).checkWebhook("call.session.start", start!.body);
  });

  it("streams_progress: interim lines are refused without it and spoken with it", async () => {
    const without = await protocol2Call(api, receiver.url, []);
    await without.phone.say("Check my order");
    const [, openWithout] = await receiver.waitFor(2);
    const refused = await answerTask(openWithout!.body, "Checking…", { final: false });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as any).errors[0].field).toBe("final");

    receiver.requests.length = 0;
    const withIt = await protocol2Call(api, receiver.url, ["streams_progress"]);
    await withIt.phone.say("Check my order");
    const [, openWith] = await receiver.waitFor(2);
    expect((await answerTask(openWith!.body, "Checking…", { final: false })).status).toBe(200);
    expect(await withIt.phone.next((f) => f.type === "speech")).toMatchObject({ text: "Checking…", final: false });
    expect((await answerTask(openWith!.body, "It shipped.")).status).toBe(200);
    expect(await withIt.phone.next((f) => f.type === "speech" && f.final)).toMatchObject({ text: "It shipped." });
  });

  it("sends events outside call sessions as ordinary envelopes", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities: ["briefing"] });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550170", text: "hi" });
    await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550001" });
    const got = await receiver.waitFor(2);
    expect(got.map(messageType)).toEqual(["sms.received", "call.busy"]);
    expect(got[0]!.body).toMatchObject({ event_type: "sms.received", payload: { text: "hi" } });
    const contract = await Contract.load(service.baseUrl);
    for (const r of got) contract.checkWebhook("event", r.body);
  });
});

// "The session, in order" (docs/protocol-2.md): the live lane carries a session's start and its
// tasks, so a task never overtakes its session's start, and the session's end waits for its
// tasks; and none of them waits behind the agent's ordinary events.
describe("protocol service-relay/2: the session, in order", () => {
  it("sends nothing of a session before the message ahead of it is answered, even from a slow receiver", async () => {
    // A slow receiver: each session message takes 600 ms to answer. While one is unanswered,
    // the next must not be sent (before, call.task.open went out during call.session.start).
    receiver.answerWith(() => ({ status: 202, afterMs: 600 }));
    const { phone } = await protocol2Call(api, receiver.url, []);
    await receiver.waitFor(1);
    await phone.say("Are you open today?");
    phone.send({ type: "hangup" });
    const all = await receiver.waitFor(3, () => true, 15_000);
    expect(all.map(messageType)).toEqual(["call.session.start", "call.task.open", "call.session.end"]);
    for (let i = 1; i < all.length; i++) {
      expect(all[i - 1]!.answeredAt, `${messageType(all[i - 1]!)} answered`).toBeDefined();
      expect(all[i]!.at, `${messageType(all[i]!)} sent after ${messageType(all[i - 1]!)} was answered`).toBeGreaterThanOrEqual(all[i - 1]!.answeredAt!);
    }
  });

  it("does not hold a session's start or tasks behind the agent's ordinary events", async () => {
    // The receiver hangs on the agent's texts (to the 10 s webhook timeout); the call that comes
    // meanwhile is a live session and must reach the runtime at once.
    receiver.answerWith((_n, r) => (messageType(r) === "sms.received" ? "hang" : 202));
    const { agentId, phoneNumber } = await agentWithNumber(api);
    expect((await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities: [] })).status).toBe(201);
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550171", text: "one" });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550171", text: "two" });
    await receiver.waitFor(1, (r) => messageType(r) === "sms.received");
    const started = Date.now();
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    const phone = await Softphone.connect(service.baseUrl, call.body.call_id, account.apiKey);
    await phone.say("Is anyone there?");
    const session = await receiver.waitFor(2, (r) => messageType(r) !== "sms.received", 5_000);
    expect(session.map(messageType)).toEqual(["call.session.start", "call.task.open"]);
    expect(session[1]!.at - started).toBeLessThan(2_000);
    phone.close();
  });
});
