import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executeRows } from "../../core/db/database.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { RelayClient } from "../../harness/relay-client.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";

let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

/** An agent with a relay socket, and a live call to it with a softphone. */
async function liveCall() {
  const { agentId } = await agentWithNumber(api);
  const relay = await RelayClient.connect(service.baseUrl, { agent_id: agentId }, account.apiKey);
  const callId = await answeredCall(api, agentId);
  const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
  return { agentId, callId, relay, phone };
}

describe("the live turn's one round trip", () => {
  it("sends nothing when the transaction fails at its commit, and the next turn goes out as the first", async () => {
    const { agentId, callId, relay, phone } = await liveCall();
    // A deferred constraint trigger fails the commit itself, after the event row was written:
    // anything sent before the commit would reach the relay.
    await service.core.db.execute(
      sql.raw(`
      create function fail_marked_events() returns trigger language plpgsql as $$
      begin
        if new.envelope->'payload'->>'text' = 'fail at commit' then raise exception 'commit refused by the test'; end if;
        return null;
      end $$`),
    );
    await service.core.db.execute(
      sql.raw(`
      create constraint trigger fail_marked_events after insert on events deferrable initially deferred
        for each row execute function fail_marked_events();`),
    );
    try {
      phone.send({ type: "say", text: "fail at commit" });
      await new Promise((r) => setTimeout(r, 500));
      expect(relay.events()).toEqual([]);
      const turns = await service.core.db.execute(sql`select count(*)::int as n from turns where call_id = ${callId}`);
      expect(JSON.stringify(turns)).toContain('"n":0');
      expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data).toEqual([]);

      const turnId = await phone.say("this one commits");
      const [event] = await relay.waitForEvents(1);
      expect(event).toMatchObject({ event_type: "call.utterance", turn_id: turnId, payload: { text: "this one commits" } });
      expect(event!.conversation).toEqual([{ role: "user", text: "this one commits", timestamp: event!.created_at }]);
      expect(relay.events()).toHaveLength(1);
    } finally {
      await service.core.db.execute(sql.raw("drop trigger fail_marked_events on events"));
      await service.core.db.execute(sql.raw("drop function fail_marked_events()"));
      phone.close();
      await relay.close();
    }
  });

  it("keeps the conversation line by line, and reads it afresh when a line was written elsewhere", async () => {
    const { callId, relay, phone } = await liveCall();
    const texts: string[] = [];
    for (let turn = 0; turn < 3; turn++) {
      const turnId = await phone.say(`question ${turn}`);
      const event = (await relay.waitForEvents(turn + 1)).at(-1)!;
      relay.ack(event.event_id);
      texts.push(`question ${turn}`);
      expect(event.conversation.map((line: { text: string }) => line.text)).toEqual(texts);
      const pushed = await api.post(`/v1/calls/${callId}/context`, { text: `answer ${turn}` }, { query: { turn_id: turnId } });
      expect(pushed.status).toBe(200);
      texts.push(`answer ${turn}`);
    }
    // A line this process did not write (as another process would): the next turn sees it.
    await service.core.db.execute(sql`insert into transcript_entries (call_id, role, text) values (${callId}, 'assistant', 'written elsewhere')`);
    texts.push("written elsewhere");
    await phone.say("last question");
    texts.push("last question");
    const event = (await relay.waitForEvents(4)).at(-1)!;
    expect(event.conversation.map((line: { text: string }) => line.text)).toEqual(texts);
    // The conversation the event carried is the transcript, timestamps included.
    const transcript = await api.get(`/v1/calls/${callId}/transcript`);
    expect(transcript.body).toEqual(event.conversation);
    phone.close();
    await relay.close();
  });
});

describe("the call.utterance envelope", () => {
  it("is sent as it is stored, its fields in the envelope's order", async () => {
    const { agentId, callId, relay, phone } = await liveCall();
    try {
      // The envelope reaches the database as a format() template: a % in the text stays a %.
      const text = 'a 50% "cut" %s %1$s \\ ü';
      const turnId = await phone.say(text);
      const [event] = await relay.waitForEvents(1);
      const [stored] = await executeRows<{ envelope: unknown }>(service.core.db, sql`select envelope from events where event_id = ${event!.event_id}`);
      expect(JSON.stringify(stored!.envelope)).toBe(JSON.stringify(event));
      expect(Object.keys(event!)).toEqual([
        "event_id",
        "agent_id",
        "account_id",
        "event_type",
        "created_at",
        "payload",
        "call_id",
        "turn_id",
        "session_key",
        "conversation",
        "conversation_omitted",
        "transcript_url",
        "push_context_url",
        "push_token",
      ]);
      expect(Object.keys(event!.payload)).toEqual(["call_id", "turn_id", "text", "input", "from_number", "to_number", "is_owner_call"]);
      expect(event).toMatchObject({
        agent_id: agentId,
        call_id: callId,
        turn_id: turnId,
        session_key: `agentline:${agentId}:${callId}`,
        payload: { text, call_id: callId },
      });
    } finally {
      phone.close();
      await relay.close();
    }
  });
});

describe("a long call", () => {
  it("finds its open turn through the open-turn index, not by reading every turn it had", async () => {
    const { callId, relay, phone } = await liveCall();
    for (let turn = 0; turn < 5; turn++) await phone.say(`question ${turn}`);
    await relay.waitForEvents(5);
    // The planner would read a table this small whole; with that ruled out, it picks the cheapest index.
    const plan = await service.core.db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      const rows = await executeRows<{ "QUERY PLAN": unknown }>(
        tx,
        sql`explain (format json) update turns set status = 'stale' where call_id = ${callId} and status = 'open'`,
      );
      return JSON.stringify(rows[0]!["QUERY PLAN"]);
    });
    expect(plan).toContain("turns_open_idx");
    phone.close();
    await relay.close();
  });
});

describe("/metrics", () => {
  it("shows the turn legs, request durations, relay sockets, pending events and webhook deliveries to a loopback client", async () => {
    const { callId, relay, phone } = await liveCall();
    const turnId = await phone.say("measure me");
    await relay.waitForEvents(1);
    expect((await api.post(`/v1/calls/${callId}/context`, { text: "measured" }, { query: { turn_id: turnId } })).status).toBe(200);
    const res = await fetch(`${service.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toMatch(/agentline_turn_leg_seconds_count\{leg="utterance"\} [1-9]/);
    expect(text).toMatch(/agentline_turn_leg_seconds_count\{leg="push"\} [1-9]/);
    expect(text).toMatch(/agentline_http_request_duration_seconds_count\{method="POST",route="\/v1\/calls\/\{call_id\}\/context",status="200"\} [1-9]/);
    expect(text).toMatch(/agentline_relay_sockets_open [1-9]/);
    expect(text).toMatch(/agentline_events_pending\{route="relay"\} [1-9]/);
    expect(text).toContain("# TYPE agentline_webhook_deliveries_total counter");
    phone.close();
    await relay.close();
  });

  it("with METRICS_TOKEN, asks for it", async () => {
    const guarded = await startTestService({ env: { METRICS_TOKEN: "metrics-token-0123456789" } });
    try {
      const refused = await fetch(`${guarded.baseUrl}/metrics`);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("content-type")).toContain("application/problem+json");
      const wrong = await fetch(`${guarded.baseUrl}/metrics`, { headers: { authorization: "Bearer metrics-token-wrong-wrong" } });
      expect(wrong.status).toBe(401);
      const allowed = await fetch(`${guarded.baseUrl}/metrics`, { headers: { authorization: "Bearer metrics-token-0123456789" } });
      expect(allowed.status).toBe(200);
      expect(await allowed.text()).toContain("agentline_relay_sockets_open");
    } finally {
      await guarded.stop();
    }
  });
});
