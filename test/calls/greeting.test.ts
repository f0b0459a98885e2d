import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, drainEvents } from "../support/telephony.js";
import { transcriptLines } from "../support/turns.js";

// Speaking first (core/calls/call-status.ts, inbound-call.ts; the sandbox softphone): the agent's
// greeting on an inbound call, a placed call's greeting when the callee answers; each heard
// first, recorded as the transcript's first assistant line, opening no turn. And from_number on a
// placed call: one of the agent's own numbers, else a 422 that changes nothing.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

const CALLER = "+14155550123";

describe("the agent's greeting", () => {
  it("is kept on the agent, changed and cleared with PATCH, and refused over 500 characters or blank", async () => {
    const created = await api.post("/v1/agents", { name: "Front desk", greeting: "  Thanks for calling Acme.  " });
    expect(created.status).toBe(201);
    expect(created.body.greeting).toBe("Thanks for calling Acme.");
    const agentId = created.body.agent_id;
    expect((await api.patch(`/v1/agents/${agentId}`, { greeting: "Acme, how can I help?" })).body.greeting).toBe("Acme, how can I help?");
    for (const greeting of ["x".repeat(501), "   ", 7]) {
      const refused = await api.patch(`/v1/agents/${agentId}`, { greeting });
      expect(refused.status).toBe(422);
      expect(refused.body.errors.map((e: any) => e.field)).toEqual(["greeting"]);
    }
    expect((await api.get(`/v1/agents/${agentId}`)).body.greeting).toBe("Acme, how can I help?");
    expect((await api.patch(`/v1/agents/${agentId}`, { greeting: null })).body.greeting).toBeNull();
    expect((await api.post("/v1/agents", { name: "Long", greeting: "x".repeat(501) })).status).toBe(422);
  });

  it("is what an inbound caller hears first, the transcript's first line, and opens no turn", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api, { greeting: "Thanks for calling Acme. How can I help?" });
    const rung = await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: CALLER });
    expect(rung.status).toBe(201);
    const callId = rung.body.call_id;
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    const greeting = await phone.next((f) => f.type === "speech");
    expect(greeting).toEqual({ type: "speech", text: "Thanks for calling Acme. How can I help?", final: true, turn_id: null });
    // Heard once the call is answered: after its status.
    expect(phone.frames.findIndex((f) => f.type === "status" && f.status === "in-progress")).toBeLessThan(phone.frames.indexOf(greeting));
    expect(await transcriptLines(api, callId)).toEqual([["assistant", "Thanks for calling Acme. How can I help?"]]);
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.event_type)).toEqual(["call.received"]);
    // The caller's first turn carries the greeting in its conversation; the greeting answered no turn.
    const turnId = await phone.say("I'd like to book a table.");
    const [utterance] = (await drainEvents(api, agentId)).filter((e) => e.event_type === "call.utterance");
    expect(utterance.turn_id).toBe(turnId);
    expect(utterance.conversation.map((l: any) => [l.role, l.text])).toEqual([
      ["assistant", "Thanks for calling Acme. How can I help?"],
      ["user", "I'd like to book a table."],
    ]);
    expect((await api.post(`/v1/calls/${callId}/context`, { text: "For how many?" }, { query: { turn_id: turnId } })).status).toBe(200);
    await phone.close();
  });

  it("is not spoken by an agent without one: the caller hears nothing until the agent answers", async () => {
    const { phoneNumber } = await agentWithNumber(api);
    const callId = (await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: CALLER })).body.call_id;
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    await phone.next((f) => f.type === "status");
    await new Promise((r) => setTimeout(r, 200));
    expect(phone.frames.filter((f) => f.type === "speech")).toEqual([]);
    expect(await transcriptLines(api, callId)).toEqual([]);
    await phone.close();
  });
});

describe("a placed call's greeting", () => {
  it("is spoken when the callee answers, instead of the agent's, and recorded first", async () => {
    const { agentId } = await agentWithNumber(api, { greeting: "Inbound only." });
    const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550150", greeting: "Hi, this is Acme calling about your order." });
    expect(placed.status).toBe(201);
    expect(placed.body.status).toBe("in-progress");
    const phone = await Softphone.connect(service.baseUrl, placed.body.call_id, account.apiKey);
    expect(await phone.next((f) => f.type === "speech")).toEqual({
      type: "speech",
      text: "Hi, this is Acme calling about your order.",
      final: true,
      turn_id: null,
    });
    expect(await transcriptLines(api, placed.body.call_id)).toEqual([["assistant", "Hi, this is Acme calling about your order."]]);
    await phone.close();
  });

  it("is not spoken on a call nobody answers", async () => {
    const { agentId } = await agentWithNumber(api);
    const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550001", greeting: "Hello!" });
    expect(placed.body.status).toBe("busy");
    expect(await transcriptLines(api, placed.body.call_id)).toEqual([]);
  });

  it("outbound calls of an agent without a greeting open silent, as before", async () => {
    const { agentId } = await agentWithNumber(api, { greeting: "For inbound callers." });
    const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550151" });
    expect(await transcriptLines(api, placed.body.call_id)).toEqual([]);
  });

  it("is refused over 500 characters, and nothing is placed", async () => {
    const { agentId } = await agentWithNumber(api);
    const before = (await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data.length;
    const refused = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550152", greeting: "x".repeat(501) });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: any) => e.field)).toEqual(["greeting"]);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data.length).toBe(before);
  });
});

describe("from_number on a placed call", () => {
  async function agentWithTwoNumbers() {
    const { agentId, phoneNumber: first } = await agentWithNumber(api);
    const second = await api.post("/v1/numbers", { agent_id: agentId });
    expect(second.status).toBe(201);
    return { agentId, first, second: second.body.phone_number as string };
  }

  it("calls from the named number of the agent, and from its oldest without one", async () => {
    const { agentId, first, second } = await agentWithTwoNumbers();
    const named = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550160", from_number: second });
    expect(named.status).toBe(201);
    expect(named.body.from_number).toBe(second);
    const unnamed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550161" });
    expect(unnamed.body.from_number).toBe(first);
  });

  it("refuses another agent's number, another account's, an unknown one and a malformed one with a 422 naming from_number, changing nothing", async () => {
    const { agentId } = await agentWithTwoNumbers();
    const { phoneNumber: otherAgents } = await agentWithNumber(api);
    const stranger = await createAccount(service.core);
    const { phoneNumber: otherAccounts } = await agentWithNumber(new Api(service.baseUrl, stranger.apiKey));
    const balance = (await api.get("/v1/billing/balance")).body.balance;
    const ledger = (await api.get("/v1/usage/transactions", { query: { limit: 100 } })).body.data.length;
    for (const from of [otherAgents, otherAccounts, "+14155550999", "not-a-number"]) {
      const refused = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550162", from_number: from });
      expect(refused.status, from).toBe(422);
      expect(refused.body.code).toBe("validation_error");
      expect(refused.body.errors.map((e: any) => e.field)).toEqual(["from_number"]);
    }
    // The detail says which number and what to do instead.
    const unknown = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550162", from_number: "+14155550999" });
    const message = `is not one of agent ${agentId}'s active numbers`;
    expect(unknown.body).toMatchObject({
      detail: `from_number +14155550999 ${message}: call from a number the agent answers, or leave it out to use its oldest.`,
      errors: [{ field: "from_number", message }],
    });
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect((await api.get("/v1/billing/balance")).body.balance).toBe(balance);
    expect((await api.get("/v1/usage/transactions", { query: { limit: 100 } })).body.data.length).toBe(ledger);
  });

  it("refuses a number the agent has released", async () => {
    const { agentId, first, second } = await agentWithTwoNumbers();
    const numbers = (await api.get("/v1/numbers", { query: { limit: 100 } })).body.data;
    const secondId = numbers.find((n: any) => n.phone_number === second).number_id;
    expect((await api.post(`/v1/numbers/${secondId}/release`)).status).toBe(200);
    const refused = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550163", from_number: second });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].field).toBe("from_number");
    expect((await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550163", from_number: first })).status).toBe(201);
  });
});
