import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { Contract } from "../../harness/contract.js";
import { startReceiver, type ReceivedRequest } from "../support/receiver.js";
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

const typeOf = (r: ReceivedRequest) => String(r.headers["x-service-event"]);

/** An agent on a protocol-2 webhook with the given capabilities, a live call and its softphone. */
async function session(capabilities: string[], agent: Record<string, unknown> = {}) {
  const { agentId, phoneNumber } = await agentWithNumber(api, agent);
  const hook = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities });
  expect(hook.status).toBe(201);
  const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
  const phone = await Softphone.connect(service.baseUrl, call.body.call_id, account.apiKey);
  return { agentId, phoneNumber, callId: call.body.call_id as string, phone };
}

/** Answers a task the way a protocol-2 runtime does: only through the context endpoint. */
function answer(task: any, text: string, extra: Record<string, unknown> = {}) {
  return fetch(task.push_context_url, {
    method: "POST",
    headers: { authorization: `Bearer ${task.push_token}`, "content-type": "application/json" },
    body: JSON.stringify({ text, ...extra }),
  });
}

describe("protocol service-relay/2", () => {
  it("with no capabilities: session.start, a task per utterance (a newer one makes the older stale), session.end", async () => {
    const { callId, phone, agentId } = await session([]);
    await receiver.waitFor(1);
    const first = await phone.say("What time do you open?");
    const second = await phone.say("And on Sundays?");
    phone.send({ type: "interrupt" });
    await new Promise((r) => setTimeout(r, 200));
    const third = await phone.say("Hello?");
    const [, , , openThird] = await receiver.waitFor(4);
    expect((await answer(openThird!.body, "Nine to five, closed Sundays.")).status).toBe(200);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Nine to five, closed Sundays.", turn_id: third });
    expect((await answer({ ...openThird!.body, push_context_url: openThird!.body.push_context_url.replace(third, first) }, "late")).status).toBe(409);
    phone.send({ type: "hangup" });
    const all = await receiver.waitFor(5);
    expect(all.map(typeOf)).toEqual(["call.session.start", "call.task.open", "call.task.open", "call.task.open", "call.session.end"]);
    const [start, open1, open2] = all;
    expect(start!.body).toMatchObject({ type: "call.session.start", call_id: callId, agent_id: agentId, direction: "outbound", to_number: "+14155550142", is_owner_call: false });
    expect(start!.body.briefing).toBeUndefined();
    expect(open1!.body).toMatchObject({ type: "call.task.open", call_id: callId, task_id: first, text: "What time do you open?", push_token: expect.stringMatching(/^pt_/) });
    expect(open2!.body.task_id).toBe(second);
    expect(all[4]!.body).toMatchObject({ type: "call.session.end", call_id: callId, status: "completed", ended_by: "caller" });
    // Each typed POST carries its own id, as body and as webhook-id.
    for (const r of all) expect(r.headers["webhook-id"]).toBe(r.body.id);
    expect(new Set(all.map((r) => r.body.id)).size).toBe(5);
    // And each matches what /openapi.json's webhooks section says of it.
    const contract = await Contract.load(service.baseUrl);
    for (const r of all) contract.checkWebhook(typeOf(r), r.body);
  });

  it("supports_amend: a further utterance amends the open task instead of making it stale", async () => {
    const { phone } = await session(["supports_amend"]);
    const turn = await phone.say("I'd like to book a table");
    const amended = await phone.say("for four people, at eight");
    expect(amended).toBe(turn);
    const [, open, amend] = await receiver.waitFor(3);
    // The type is sent twice: as X-Service-Event (the delivery's own) and in the body.
    expect(typeOf(amend!)).toBe("call.task.amend");
    expect(amend!.body).toMatchObject({
      type: "call.task.amend",
      task_id: turn,
      text: "for four people, at eight",
      full_text: "I'd like to book a table\nfor four people, at eight",
    });
    expect(amend!.body.conversation.map((l: any) => l.text)).toEqual(["I'd like to book a table", "for four people, at eight"]);
    (await Contract.load(service.baseUrl)).checkWebhook("call.task.amend", amend!.body);
    expect((await answer(open!.body, "Booked for four at eight.")).status).toBe(200);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Booked for four at eight.", turn_id: turn });
  });

  it("supports_cancel: an interruption sends call.task.cancel", async () => {
    const { phone } = await session(["supports_cancel"]);
    const turn = await phone.say("Tell me about your menu");
    const [, open] = await receiver.waitFor(2);
    phone.send({ type: "interrupt" });
    const [, , cancel] = await receiver.waitFor(3);
    expect(typeOf(cancel!)).toBe("call.task.cancel");
    expect(cancel!.body).toMatchObject({ type: "call.task.cancel", task_id: turn, reason: "interrupted" });
    (await Contract.load(service.baseUrl)).checkWebhook("call.task.cancel", cancel!.body);
    expect((await answer(open!.body, "too late")).status).toBe(409);
  });

  it("briefing: session.start says who is calling, whether it is the owner, and the history with that number", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api, { owner_number: "+14155550111" });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550111", text: "Call me about the order" });
    const earlier = await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550111" });
    await api.post(`/v1/sandbox/calls/${earlier.body.call_id}/say`, { text: "First call" });
    await api.post(`/v1/sandbox/calls/${earlier.body.call_id}/hangup`);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities: ["briefing"] });
    const now = await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550111" });
    const [start] = await receiver.waitFor(1, (r) => typeOf(r) === "call.session.start");
    expect(start!.body).toMatchObject({ call_id: now.body.call_id, direction: "inbound", is_owner_call: true });
    expect(start!.body.briefing.caller).toEqual({ number: "+14155550111", is_owner: true });
    expect(start!.body.briefing.recent_calls).toEqual([expect.objectContaining({ call_id: earlier.body.call_id, status: "completed", last_lines: [expect.objectContaining({ role: "user", text: "First call" })] })]);
    expect(start!.body.briefing.recent_texts).toEqual([expect.objectContaining({ text: "Call me about the order" })]);
    (await Contract.load(service.baseUrl)).checkWebhook("call.session.start", start!.body);
  });

  it("streams_progress: interim lines are refused without it and spoken with it", async () => {
    const without = await session([]);
    await without.phone.say("Check my order");
    const [, openWithout] = await receiver.waitFor(2);
    const refused = await answer(openWithout!.body, "Checking…", { final: false });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as any).errors[0].field).toBe("final");

    receiver.requests.length = 0;
    const withIt = await session(["streams_progress"]);
    await withIt.phone.say("Check my order");
    const [, openWith] = await receiver.waitFor(2);
    expect((await answer(openWith!.body, "Checking…", { final: false })).status).toBe(200);
    expect(await withIt.phone.next((f) => f.type === "speech")).toMatchObject({ text: "Checking…", final: false });
    expect((await answer(openWith!.body, "It shipped.")).status).toBe(200);
    expect(await withIt.phone.next((f) => f.type === "speech" && f.final)).toMatchObject({ text: "It shipped." });
  });

  it("sends events outside call sessions as ordinary envelopes", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities: ["briefing"] });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550170", text: "hi" });
    await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550001" });
    const got = await receiver.waitFor(2);
    expect(got.map(typeOf)).toEqual(["sms.received", "call.busy"]);
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
    const { phone } = await session([]);
    await receiver.waitFor(1);
    await phone.say("Are you open today?");
    phone.send({ type: "hangup" });
    const all = await receiver.waitFor(3, () => true, 15_000);
    expect(all.map(typeOf)).toEqual(["call.session.start", "call.task.open", "call.session.end"]);
    for (let i = 1; i < all.length; i++) {
      expect(all[i - 1]!.answeredAt, `${typeOf(all[i - 1]!)} answered`).toBeDefined();
      expect(all[i]!.at, `${typeOf(all[i]!)} sent after ${typeOf(all[i - 1]!)} was answered`).toBeGreaterThanOrEqual(all[i - 1]!.answeredAt!);
    }
  });

  it("does not hold a session's start or tasks behind the agent's ordinary events", async () => {
    // The receiver hangs on the agent's texts (to the 10 s webhook timeout); the call that comes
    // meanwhile is a live session and must reach the runtime at once.
    receiver.answerWith((_n, r) => (typeOf(r) === "sms.received" ? "hang" : 202));
    const { agentId, phoneNumber } = await agentWithNumber(api);
    expect((await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities: [] })).status).toBe(201);
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550171", text: "one" });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550171", text: "two" });
    await receiver.waitFor(1, (r) => typeOf(r) === "sms.received");
    const started = Date.now();
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    const phone = await Softphone.connect(service.baseUrl, call.body.call_id, account.apiKey);
    await phone.say("Is anyone there?");
    const session = await receiver.waitFor(2, (r) => typeOf(r) !== "sms.received", 5_000);
    expect(session.map(typeOf)).toEqual(["call.session.start", "call.task.open"]);
    expect(session[1]!.at - started).toBeLessThan(2_000);
    phone.close();
  });
});
