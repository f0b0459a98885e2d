import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversations } from "../../core/calls/conversation-cache.js";
import { CONVERSATION_MAX_BYTES, CONVERSATION_MAX_LINES } from "../../core/calls/conversation-window.js";
import { PAGE_MAX_BYTES } from "../../core/events/events.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";

// A long call must not cost the service its square: each call.utterance carries a window of the
// conversation (the newest lines within a size budget), never the whole call, and a page of the
// mailbox stops at a byte budget. A caller who talks for 300 long turns is the attack.

let service: TestService;
let account: TestAccount;
let api: Api;
let other: Bystander;

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  other = await bystander(service);
});
afterAll(() => service?.stop());

const TURNS = 300;
// About a minute of speech a turn: 300 of them are about 300 KB of transcript.
const turnText = (n: number) => `turn ${n}: ${"the caller keeps talking and talking ".repeat(28)}`.slice(0, 1000).trim();

/** The call's utterance events as stored: each envelope's size in bytes, oldest first. */
async function storedSizes(callId: string): Promise<number[]> {
  const rows = await service.core.dbHandle.rows<{ bytes: number }>(
    "select octet_length(envelope::text) as bytes from events where event_type = 'call.utterance' and envelope->>'call_id' = $1 order by seq",
    [callId],
  );
  return rows.map((r) => Number(r.bytes));
}

/** What a window of the transcript's newest lines should be, by the rule the events follow. */
function expectedWindow(transcript: Array<{ text: string }>) {
  let bytes = 0;
  let first = transcript.length;
  while (first > 0 && transcript.length - first < CONVERSATION_MAX_LINES) {
    const size = Buffer.byteLength(transcript[first - 1]!.text);
    if (first < transcript.length && bytes + size > CONVERSATION_MAX_BYTES) break;
    bytes += size;
    first--;
  }
  return { lines: transcript.slice(first), omitted: first };
}

describe("a call of 300 long turns, its agent on the mailbox", () => {
  let agentId: string;
  let callId: string;

  beforeAll(async () => {
    ({ agentId } = await agentWithNumber(api));
    callId = await answeredCall(api, agentId);
    const during: Promise<number>[] = [];
    for (let n = 0; n < TURNS; n++) {
      expect((await api.post(`/v1/sandbox/calls/${callId}/say`, { text: turnText(n) })).status).toBe(201);
      if (n % 50 === 0) during.push(other.check());
    }
    await Promise.all(during);
  }, 300_000);

  it("stores each utterance at a size that does not grow with the call: the total grows linearly", async () => {
    const sizes = await storedSizes(callId);
    expect(sizes).toHaveLength(TURNS);
    // One window (16 KiB of text and its lines' fields) plus the envelope's own fields.
    const bound = CONVERSATION_MAX_BYTES + 16 * 1024;
    expect(Math.max(...sizes)).toBeLessThan(bound);
    // The last turn costs what the 30th does: the window was full by then.
    expect(sizes.at(-1)!).toBeLessThan(sizes[29]! * 1.1);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThan(TURNS * bound);
    await other.check();
  });

  it("carries the newest lines, this utterance last, and says how many it left out and where they are", async () => {
    const transcript = (await api.get(`/v1/calls/${callId}/transcript`)).body as Array<{ role: string; text: string; timestamp: string }>;
    expect(transcript).toHaveLength(TURNS);
    const [last] = (await service.core.dbHandle.rows<{ envelope: any }>(
      "select envelope from events where event_type = 'call.utterance' and envelope->>'call_id' = $1 order by seq desc limit 1",
      [callId],
    )) as [{ envelope: any }];
    const { conversation, conversation_omitted, transcript_url } = last.envelope;
    expect(conversation.at(-1).text).toBe(turnText(TURNS - 1));
    expect(conversation).toEqual(expectedWindow(transcript).lines);
    expect(conversation_omitted).toBe(expectedWindow(transcript).omitted);
    expect(conversation_omitted + conversation.length).toBe(TURNS);
    expect(conversation_omitted).toBeGreaterThan(250);
    expect(transcript_url).toBe(`${service.baseUrl}/v1/calls/${callId}/transcript`);
  });

  it("reads the same window afresh, from the newest lines only, when the process's copy is gone", async () => {
    conversations(service.core).forget(callId);
    expect((await api.post(`/v1/sandbox/calls/${callId}/say`, { text: "one more thing" })).status).toBe(201);
    const transcript = (await api.get(`/v1/calls/${callId}/transcript`)).body as Array<{ text: string }>;
    const [last] = (await service.core.dbHandle.rows<{ envelope: any }>(
      "select envelope from events where event_type = 'call.utterance' and envelope->>'call_id' = $1 order by seq desc limit 1",
      [callId],
    )) as [{ envelope: any }];
    expect(last.envelope.conversation).toEqual(expectedWindow(transcript).lines);
    expect(last.envelope.conversation_omitted).toBe(expectedWindow(transcript).omitted);
    // The process keeps the window it read, not the call.
    const kept = conversations(service.core).get(callId)!;
    expect(kept.lines).toEqual(last.envelope.conversation);
    expect(kept.omitted).toBe(last.envelope.conversation_omitted);
  });

  it("pages the mailbox within its byte budget, has_more until the end, losing and repeating nothing", async () => {
    const pending = await service.core.dbHandle.rows<{ event_id: string }>(
      "select event_id from events where agent_id = $1 and status = 'pending' order by seq",
      [agentId],
    );
    expect(pending.length).toBeGreaterThan(TURNS);
    const peeked = await api.get("/v1/events/peek", { query: { agent_id: agentId, limit: 100 } });
    expect(peeked.text.length).toBeLessThan(PAGE_MAX_BYTES + 4096);
    expect(peeked.body.data.length).toBeLessThan(100);
    expect(peeked.body.has_more).toBe(true);

    const seen: string[] = [];
    for (let page = 0; page < 50; page++) {
      const res = await api.get("/v1/events", { query: { agent_id: agentId, limit: 100 } });
      expect(res.status).toBe(200);
      expect(Buffer.byteLength(res.text)).toBeLessThan(PAGE_MAX_BYTES + 4096);
      expect(res.body.data.length).toBeGreaterThan(0);
      seen.push(...res.body.data.map((e: { event_id: string }) => e.event_id));
      if (!res.body.has_more) break;
      // A full page of utterances is over the budget: it stopped early, and said so.
      expect(res.body.data.length).toBeLessThan(100);
    }
    expect(seen).toEqual(pending.map((r) => r.event_id));
    const [left] = await service.core.dbHandle.rows<{ n: number }>("select count(*)::int as n from events where agent_id = $1 and status = 'pending'", [
      agentId,
    ]);
    expect(left!.n).toBe(0);
    await other.check();
  });
});

describe("a long call of an agent on a webhook", () => {
  it("posts each utterance with the window, not the call: protocol 1's event, protocol 2's task.open and task.amend", async () => {
    const receiver = await startReceiver(() => 202);
    try {
      const variants = [
        ["service-relay/1", [], "call.utterance"],
        ["service-relay/2", [], "call.task.open"],
        ["service-relay/2", ["supports_amend"], "call.task.amend"],
      ] as const;
      for (const [protocol, capabilities, type] of variants) {
        const { agentId } = await agentWithNumber(api);
        expect((await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol, capabilities })).status).toBe(201);
        const callId = await answeredCall(api, agentId);
        for (let n = 0; n < 40; n++) expect((await api.post(`/v1/sandbox/calls/${callId}/say`, { text: turnText(n) })).status).toBe(201);
        const transcript = (await api.get(`/v1/calls/${callId}/transcript`)).body as Array<{ text: string }>;
        const last = () => receiver.requests.filter((r) => r.body?.call_id === callId && (r.body.type ?? r.body.event_type) === type).at(-1);
        await receiver.waitFor(1);
        await expect.poll(() => last()?.body.conversation.at(-1).text, { timeout: 20_000 }).toBe(turnText(39));
        const body = last()!.body;
        expect(body.conversation).toEqual(expectedWindow(transcript).lines);
        expect(body.conversation_omitted).toBe(expectedWindow(transcript).omitted);
        expect(body.conversation_omitted).toBeGreaterThan(0);
        expect(body.transcript_url).toBe(`${service.baseUrl}/v1/calls/${callId}/transcript`);
        expect(Buffer.byteLength(JSON.stringify(body.conversation))).toBeLessThan(CONVERSATION_MAX_BYTES + 16 * 1024);
      }
      await other.check();
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
