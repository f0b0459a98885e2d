import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../support/api.js";
import { spawnService } from "../support/process.js";
import { startSmtpServer } from "../support/smtp.js";
import { Softphone } from "../support/softphone.js";

let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let dataDir: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  dataDir = mkdtempSync(join(tmpdir(), "agentline-conversation-"));
});
afterAll(async () => {
  await smtp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a sandbox conversation, as a newcomer drives it (npm start)", () => {
  it("buys a number, calls, hears the caller, answers, goes stale, ends", { timeout: 180_000 }, async () => {
    const service = await spawnService({ DATA_DIR: dataDir, SMTP_URL: smtp.url, TURN_TIMEOUT_MS: "60000" });
    let api = new Api(service.baseUrl);
    await api.post("/v1/auth/otp", { email: "dev@example.com" });
    const { body: session } = await api.post("/v1/auth/verify", { email: "dev@example.com", otp: await smtp.codeFor("dev@example.com") });
    api = api.withKey(session.api_key);

    const { body: agent } = await api.post("/v1/agents", { name: "Bakery line" });
    const number = await api.post("/v1/numbers", { agent_id: agent.agent_id, area_code: "415" });
    expect(number.status).toBe(201);
    expect(number.body).toMatchObject({ agent_id: agent.agent_id, country: "US", number_type: "local", status: "active" });
    expect(number.body.phone_number).toMatch(/^\+141555501\d\d$/);

    const call = await api.post("/v1/calls", { agent_id: agent.agent_id, to_number: "+14155550199" });
    expect(call.status).toBe(201);
    expect(call.body).toMatchObject({ direction: "outbound", status: "in-progress", from_number: number.body.phone_number, to_number: "+14155550199" });
    const callId = call.body.call_id;

    const phone = await Softphone.connect(service.baseUrl, callId, session.api_key);
    await phone.next((f) => f.type === "status" && f.status === "in-progress");
    const firstTurn = await phone.say("Hi, do you have sourdough today?");

    const { body: pending } = await api.get("/v1/events/peek", { query: { agent_id: agent.agent_id } });
    const utterance = pending.data.find((e: any) => e.event_type === "call.utterance");
    expect(utterance).toMatchObject({
      event_id: expect.stringMatching(/^evt_/),
      agent_id: agent.agent_id,
      account_id: session.account_id,
      event_type: "call.utterance",
      created_at: expect.any(String),
      call_id: callId,
      turn_id: firstTurn,
      session_key: expect.any(String),
      push_context_url: `${service.baseUrl}/v1/calls/${callId}/context?turn_id=${firstTurn}`,
      push_token: expect.stringMatching(/^pt_/),
      payload: expect.objectContaining({ text: "Hi, do you have sourdough today?", turn_id: firstTurn }),
    });
    expect(utterance.conversation).toEqual([{ role: "user", text: "Hi, do you have sourdough today?", timestamp: expect.any(String) }]);

    // The runtime answers with nothing but the event's own URL and token.
    const pushed = await fetch(utterance.push_context_url, {
      method: "POST",
      headers: { authorization: `Bearer ${utterance.push_token}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "We do! Two loaves left." }),
    });
    expect(pushed.status).toBe(200);
    const heard = await phone.next((f) => f.type === "speech");
    expect(heard).toEqual({ type: "speech", text: "We do! Two loaves left.", final: true, turn_id: firstTurn });

    // After a second utterance the first turn takes no more answers.
    const secondTurn = await phone.say("Great, and rye?");
    const lateForFirst = await api.post(`/v1/calls/${callId}/context`, { text: "Late answer" }, { query: { turn_id: firstTurn }, key: utterance.push_token });
    expect(lateForFirst.status).toBe(409);
    expect(lateForFirst.body.code).toBe("turn_answered");
    // A third utterance before the second is answered makes the second stale.
    await phone.say("Actually, never mind the rye.");
    const reallyStale = await api.post(`/v1/calls/${callId}/context`, { text: "Rye too!" }, { query: { turn_id: secondTurn } });
    expect(reallyStale.status).toBe(409);
    expect(reallyStale.body.code).toBe("turn_stale");

    phone.send({ type: "hangup" });
    await phone.next((f) => f.type === "status" && f.status === "completed");
    expect((await phone.closed).code).toBe(1000);

    const afterEnd = await api.post(`/v1/calls/${callId}/context`, { text: "Bye" }, { query: { turn_id: secondTurn }, key: utterance.push_token });
    expect(afterEnd.status).toBe(410);
    expect(afterEnd.body.code).toBe("call_ended");

    const transcript = await api.get(`/v1/calls/${callId}/transcript`);
    expect(transcript.body.map((l: any) => [l.role, l.text])).toEqual([
      ["user", "Hi, do you have sourdough today?"],
      ["assistant", "We do! Two loaves left."],
      ["user", "Great, and rye?"],
      ["user", "Actually, never mind the rye."],
    ]);

    const { body: polled } = await api.get("/v1/events", { query: { agent_id: agent.agent_id } });
    const types = polled.data.map((e: any) => e.event_type);
    expect(types).toEqual(["call.utterance", "call.utterance", "call.utterance", "call.completed"]);
    expect(polled.data.at(-1).payload).toMatchObject({ call_id: callId, status: "completed", ended_by: "caller" });
    expect((await api.get("/v1/calls/" + callId)).body).toMatchObject({ status: "completed", ended_by: "caller" });
    expect(await service.stop()).toBe(0);
  });
});
