import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { Contract } from "../../harness/contract.js";
import { answerTask, messageType, protocol2Call } from "../support/protocol2.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { mailboxCall, pushToTurn, sayOnCall, transcriptLines, webhookCall } from "../support/turns.js";

// A stale turn answers 409: the caller spoke again before the answer came, so the open turn went
// stale and a push to it is refused with turn_stale (docs/decisions/0020-live-turns.md). Here for
// each way a turn reaches an agent: the mailbox, a protocol-1 webhook, and a protocol-2 webhook,
// where supports_amend turns more words into an amend of the open task instead (docs/protocol-2.md).
// How the SDK's onTurn takes the 409 is in test/sdk/turns.test.ts.

let service: TestService;
let account: TestAccount;
let api: Api;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  // No filler while a test holds a turn open.
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());
beforeEach(async () => {
  receiver = await startReceiver(() => 202);
});
afterEach(() => receiver?.close());

describe("a push refused", () => {
  it("to a turn the caller has spoken past: 409 turn_stale, naming the turn and saying to answer the newer one", async () => {
    const { callId } = await mailboxCall(api);
    const old = await sayOnCall(api, callId, "Hello?");
    await sayOnCall(api, callId, "Hello, anyone?");
    const res = await pushToTurn(api, callId, old, { text: "Hi!" });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: "turn_stale",
      detail: `Turn ${old} is stale: the caller has spoken again since. Discard this answer and answer the newer call.utterance.`,
    });
  });
});

describe("a turn of an agent on a webhook", () => {
  it("carries the same call.utterance a relay agent gets, and a second utterance makes the first turn stale", async () => {
    const { agentId, callId, phone } = await webhookCall(api, receiver.url);
    const first = await phone.say("What time do you open?");
    expect(first).toMatch(/^turn_/);
    const [opened] = await receiver.waitFor(1);
    // Protocol 1 posts the event itself: every live-turn field a runtime needs to answer.
    expect(opened!.body).toEqual({
      event_id: expect.stringMatching(/^evt_/),
      agent_id: agentId,
      account_id: account.accountId,
      event_type: "call.utterance",
      created_at: expect.any(String),
      payload: {
        call_id: callId,
        turn_id: first,
        text: "What time do you open?",
        input: "speech",
        from_number: expect.any(String),
        to_number: "+14155550142",
        is_owner_call: false,
      },
      call_id: callId,
      turn_id: first,
      session_key: `agentline:${agentId}:${callId}`,
      conversation: [{ role: "user", text: "What time do you open?", timestamp: opened!.body.created_at }],
      conversation_omitted: 0,
      transcript_url: expect.stringContaining(`/v1/calls/${callId}/transcript`),
      push_context_url: expect.stringContaining(`/v1/calls/${callId}/context?turn_id=${first}`),
      push_token: expect.stringMatching(/^pt_/),
    });

    // Without protocol 2's supports_amend, more words are a new turn, and the old answer is refused.
    const second = await phone.say("And on Sundays?");
    expect(second).toMatch(/^turn_/);
    expect(second).not.toBe(first);
    const [, next] = await receiver.waitFor(2);
    expect(next!.body).toMatchObject({ turn_id: second, session_key: `agentline:${agentId}:${callId}` });
    expect(next!.body.conversation.map((l: any) => [l.role, l.text])).toEqual([
      ["user", "What time do you open?"],
      ["user", "And on Sundays?"],
    ]);
    const late = await pushToTurn(api, callId, first, { text: "Nine to five." });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("turn_stale");
    expect((await pushToTurn(api, callId, second, { text: "Closed on Sundays." }, next!.body.push_token)).status).toBe(200);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Closed on Sundays.", turn_id: second });
    expect(await transcriptLines(api, callId)).toEqual([
      ["user", "What time do you open?"],
      ["user", "And on Sundays?"],
      ["assistant", "Closed on Sundays."],
    ]);
    phone.close();
  });

  it("with supports_amend, records the added words as the caller's in the transcript", async () => {
    const { callId, phone } = await webhookCall(api, receiver.url, { protocol: "service-relay/2", capabilities: ["supports_amend"] });
    const turn = await phone.say("I'd like to book a table");
    expect(await phone.say("for four people")).toBe(turn);
    const [amend] = await receiver.waitFor(1, (r) => r.body.type === "call.task.amend");
    const expected = [
      ["user", "I'd like to book a table"],
      ["user", "for four people"],
    ];
    expect(amend!.body.conversation.map((l: any) => [l.role, l.text])).toEqual(expected);
    expect(await transcriptLines(api, callId)).toEqual(expected);
    phone.close();
  });
});

describe("protocol service-relay/2", () => {
  it("with no capabilities: session.start, a task per utterance (a newer one makes the older stale), session.end", async () => {
    const { callId, phone, agentId } = await protocol2Call(api, receiver.url, []);
    await receiver.waitFor(1);
    const first = await phone.say("What time do you open?");
    const second = await phone.say("And on Sundays?");
    phone.send({ type: "interrupt" });
    await new Promise((r) => setTimeout(r, 200));
    const third = await phone.say("Hello?");
    const [, , , openThird] = await receiver.waitFor(4);
    expect((await answerTask(openThird!.body, "Nine to five, closed Sundays.")).status).toBe(200);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Nine to five, closed Sundays.", turn_id: third });
    expect((await answerTask({ ...openThird!.body, push_context_url: openThird!.body.push_context_url.replace(third, first) }, "late")).status).toBe(409);
    phone.send({ type: "hangup" });
    const all = await receiver.waitFor(5);
    expect(all.map(messageType)).toEqual(["call.session.start", "call.task.open", "call.task.open", "call.task.open", "call.session.end"]);
    const [start, open1, open2] = all;
    expect(start!.body).toMatchObject({
      type: "call.session.start",
      call_id: callId,
      agent_id: agentId,
      direction: "outbound",
      to_number: "+14155550142",
      is_owner_call: false,
    });
    expect(start!.body.briefing).toBeUndefined();
    expect(open1!.body).toMatchObject({
      type: "call.task.open",
      call_id: callId,
      task_id: first,
      text: "What time do you open?",
      push_token: expect.stringMatching(/^pt_/),
    });
    expect(open2!.body.task_id).toBe(second);
    expect(all[4]!.body).toMatchObject({ type: "call.session.end", call_id: callId, status: "completed", ended_by: "caller" });
    // Each typed POST carries its own id, as body and as webhook-id.
    for (const r of all) expect(r.headers["webhook-id"]).toBe(r.body.id);
    expect(new Set(all.map((r) => r.body.id)).size).toBe(5);
    // And each matches what /openapi.json's webhooks section says of it.
    const contract = await Contract.load(service.baseUrl);
    for (const r of all) contract.checkWebhook(messageType(r), r.body);
  });

  it("supports_amend: a further utterance amends the open task instead of making it stale", async () => {
    const { phone } = await protocol2Call(api, receiver.url, ["supports_amend"]);
    const turn = await phone.say("I'd like to book a table");
    const amended = await phone.say("for four people, at eight");
    expect(amended).toBe(turn);
    const [, open, amend] = await receiver.waitFor(3);
    // The type is sent twice: as X-Service-Event (the delivery's own) and in the body.
    expect(messageType(amend!)).toBe("call.task.amend");
    expect(amend!.body).toMatchObject({
      type: "call.task.amend",
      task_id: turn,
      text: "for four people, at eight",
      full_text: "I'd like to book a table\nfor four people, at eight",
    });
    expect(amend!.body.conversation.map((l: any) => l.text)).toEqual(["I'd like to book a table", "for four people, at eight"]);
    (await Contract.load(service.baseUrl)).checkWebhook("call.task.amend", amend!.body);
    expect((await answerTask(open!.body, "Booked for four at eight.")).status).toBe(200);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Booked for four at eight.", turn_id: turn });
  });
});
