import { Ajv } from "ajv";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { turnSettings } from "../../core/config/turns.js";
import { createAccount } from "../../harness/accounts.js";
import { toolsFor } from "../../mcp/server.js";
import { adminCommand, databaseForProcess, httpMcp, type McpSession, stdioMcp } from "../support/mcp.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";

/** What the issue asks for by name; the server may offer more. */
const REQUIRED_TOOLS = [
  "list_agents",
  "create_agent",
  "update_agent",
  "delete_agent",
  "list_numbers",
  "buy_number",
  "reassign_number",
  "release_number",
  "place_call",
  "get_call",
  "list_calls",
  "get_transcript",
  "hang_up_call",
  "transfer_call",
  "push_context",
  "say_on_call",
  "send_digits",
  "wait_for_event",
  "peek_events",
  "list_messages",
  "list_conversations",
  "get_webhook",
  "set_webhook",
  "delete_webhook",
  "test_webhook",
  "list_voices",
  "get_default_voice",
  "set_default_voice",
  "get_balance",
  "get_usage",
  "send_feedback",
  "simulate_inbound_call",
  "simulate_caller_speech",
  "simulate_inbound_text",
  "send_text",
];

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;

/** MCP's values for hints a tool leaves out. */
const HINT_DEFAULTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true };

const SPENDING = ["buy_number", "place_call", "simulate_inbound_call", "simulate_inbound_text", "send_text", "transfer_call"];

/** A validator that refuses what it does not understand: a schema it cannot compile is not a valid schema. */
function strictAjv() {
  const ajv = new Ajv({ strict: true, strictTypes: false, allErrors: true, validateSchema: true });
  addFormats(ajv);
  ajv.addKeyword("example");
  return ajv;
}

/** tools/list: every tool, each well formed. Returns the output validators by tool name. */
async function checkListing(mcp: McpSession) {
  const { tools } = await mcp.client.listTools();
  const names = tools.map((t) => t.name);
  expect(names.sort()).toEqual(
    toolsFor({ carrier: "sandbox" })
      .map((t) => t.name)
      .sort(),
  );
  for (const name of REQUIRED_TOOLS) expect(names).toContain(name);
  const ajv = strictAjv();
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  for (const tool of tools) {
    expect(tool.name).toMatch(/^[a-z][a-z0-9_]{0,39}$/);
    expect(tool.description!.length, tool.name).toBeGreaterThan(30);
    expect(tool.inputSchema.type).toBe("object");
    expect(JSON.stringify(tool.inputSchema)).not.toContain("$ref");
    expect(() => ajv.compile(tool.inputSchema), `${tool.name} inputSchema`).not.toThrow();
    expect(tool.outputSchema?.type, `${tool.name} outputSchema`).toBe("object");
    validators.set(tool.name, ajv.compile(tool.outputSchema!));
    const spends = SPENDING.includes(tool.name);
    expect(tool._meta?.["agentline/spends_money"] ?? false, tool.name).toBe(spends);
    expect(tool.description!.includes("Spends money"), tool.name).toBe(spends);
    // Every parameter says what it is for: a model fills in what it understands.
    for (const [field, schema] of Object.entries(tool.inputSchema.properties ?? {}))
      expect((schema as { description?: string }).description, `${tool.name}.${field} has no description`).toMatch(/\w{3}/);
  }
  // Hints a client reads with MCP's defaults for the ones left out.
  const hint = (name: string, which: keyof typeof HINT_DEFAULTS) => tools.find((t) => t.name === name)!.annotations?.[which] ?? HINT_DEFAULTS[which];
  for (const name of ["delete_agent", "release_number", "delete_webhook", "hang_up_call"]) expect(hint(name, "destructiveHint"), name).toBe(true);
  for (const name of ["create_agent", "push_context", "place_call", "buy_number", "send_text"]) expect(hint(name, "destructiveHint"), name).toBe(false);
  for (const name of ["list_agents", "get_call", "get_transcript", "peek_events", "get_balance"]) expect(hint(name, "readOnlyHint"), name).toBe(true);
  for (const name of ["wait_for_event", "push_context", "place_call"]) expect(hint(name, "readOnlyHint"), name).toBe(false);
  for (const name of ["place_call", "send_text", "transfer_call"]) expect(hint(name, "openWorldHint"), name).toBe(true);
  for (const name of ["list_agents", "create_agent", "wait_for_event"]) expect(hint(name, "openWorldHint"), name).toBe(false);
  for (const name of ["update_agent", "hang_up_call", "set_default_voice"]) expect(hint(name, "idempotentHint"), name).toBe(true);
  return validators;
}

/**
 * Calls every tool at least once, successfully, the way an agent would, and checks each result
 * against the outputSchema tools/list gave (the SDK's client checks it too).
 */
async function tour(mcp: McpSession, receiverUrl: string) {
  const validators = await checkListing(mcp);
  const ok = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await mcp.ok(name, args);
    const validate = validators.get(name)!;
    expect(validate(result), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    return result;
  };

  const agent = await ok("create_agent", { name: "Front desk", description: "Answers the phone", metadata: { team: "ops" } });
  const other = await ok("create_agent", { name: "Back office" });
  expect((await ok("list_agents", { limit: 10 })).data).toHaveLength(2);
  expect((await ok("get_agent", { agent_id: agent.agent_id })).name).toBe("Front desk");
  expect((await ok("update_agent", { agent_id: agent.agent_id, description: null, voice_id: "mark" })).description).toBeNull();

  const number = await ok("buy_number", { agent_id: agent.agent_id, area_code: "415" });
  expect(number.phone_number).toMatch(/^\+1415/);
  const spare = await ok("buy_number", { agent_id: other.agent_id });
  expect((await ok("list_numbers", {})).data).toHaveLength(2);
  expect((await ok("get_number", { number_id: number.number_id })).agent_id).toBe(agent.agent_id);
  expect((await ok("reassign_number", { number_id: spare.number_id, agent_id: agent.agent_id })).agent_id).toBe(agent.agent_id);
  expect((await ok("release_number", { number_id: spare.number_id })).status).toBe("released");

  const call = await ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });
  expect(call.status).toBe("in-progress");
  const { turn_id } = await ok("simulate_caller_speech", { call_id: call.call_id, text: "Hello, is this the front desk?" });
  const peeked = await ok("peek_events", { agent_id: agent.agent_id });
  expect(peeked.data.map((e: any) => e.event_type)).toContain("call.utterance");
  const waited = await ok("wait_for_event", { call_id: call.call_id, event_types: ["call.utterance"], timeout_seconds: 5 });
  expect(waited.events[0].turn_id).toBe(turn_id);
  expect((await ok("push_context", { call_id: call.call_id, turn_id, text: "Yes, how can I help?" })).turn_status).toBe("answered");
  expect(await ok("transfer_call", { call_id: call.call_id, to_number: "+14155557777", mode: "warm", whisper: "A caller for the desk." })).toMatchObject({
    transfer_status: "dialing",
  });
  const bridged = await ok("wait_for_event", { call_id: call.call_id, event_types: ["call.transfer.answered"], timeout_seconds: 5 });
  expect(bridged.events[0].payload).toMatchObject({ to_number: "+14155557777", mode: "warm" });
  expect((await ok("get_call", { call_id: call.call_id })).transferred_to).toBe("+14155557777");
  expect((await ok("get_call", { call_id: call.call_id })).status).toBe("in-progress");
  expect((await ok("get_transcript", { call_id: call.call_id })).transcript.map((l: any) => l.role)).toEqual(["user", "assistant"]);
  expect((await ok("watch_call", { call_id: call.call_id, after: 1 })).lines.map((l: any) => l.role)).toEqual(["assistant"]);
  expect((await ok("say_on_call", { call_id: call.call_id, text: "Anything else?" })).call_ending).toBe(false);
  expect((await ok("send_digits", { call_id: call.call_id, digits: "1w#" })).digits).toBe("1w#");
  expect((await ok("hang_up_call", { call_id: call.call_id })).status).toBe("completed");
  expect((await ok("list_calls", { agent_id: agent.agent_id })).data).toHaveLength(1);

  const inbound = await ok("simulate_inbound_call", { to_number: number.phone_number, from_number: "+14155550199" });
  expect((await ok("simulate_caller_hangup", { call_id: inbound.call_id })).status).toBe("completed");
  await ok("simulate_inbound_text", { to_number: number.phone_number, from_number: "+14155550199", text: "Are you open today?" });
  const reply = await ok("send_text", { agent_id: agent.agent_id, to_number: "+14155550199", text: "Yes, from 9 to 5." });
  expect(reply).toMatchObject({ direction: "outbound", status: "queued", segments: 1, from_number: number.phone_number });
  const threads = await ok("list_conversations", { agent_id: agent.agent_id });
  expect(threads.data).toHaveLength(1);
  expect((await ok("list_messages", { conversation_id: threads.data[0].conversation_id })).data.map((m: any) => [m.text, m.status])).toEqual([
    ["Yes, from 9 to 5.", "delivered"],
    ["Are you open today?", "received"],
  ]);
  const drained = await ok("wait_for_event", { agent_id: agent.agent_id, timeout_seconds: 0, limit: 100 });
  expect(drained.events.map((e: any) => e.event_type)).toEqual([
    "call.transfer.started",
    "call.completed",
    "call.received",
    "call.completed",
    "sms.received",
    "sms.status",
    "sms.status",
  ]);

  const webhook = await ok("set_webhook", { agent_id: other.agent_id, url: receiverUrl });
  expect(webhook.secret).toMatch(/^whsec_/);
  expect((await ok("get_webhook", { agent_id: other.agent_id })).url).toBe(receiverUrl);
  expect((await ok("test_webhook", { agent_id: other.agent_id })).delivered).toBe(true);
  expect((await ok("delete_webhook", { agent_id: other.agent_id })).deleted).toBe(true);

  expect((await ok("list_voices", { limit: 100 })).data.length).toBeGreaterThan(5);
  expect((await ok("set_default_voice", { voice_id: "mark" })).source).toBe("account");
  expect((await ok("get_default_voice")).voice_id).toBe("mark");
  expect((await ok("reset_default_voice")).source).toBe("system");

  expect(Number((await ok("get_balance")).balance)).toBeGreaterThan(0);
  expect((await ok("get_usage", { period: "month" })).numbers.purchased).toBe(2);
  expect((await ok("list_transactions", { category: "number" })).data.length).toBeGreaterThanOrEqual(2);
  expect((await ok("send_feedback", { category: "feature_request", message: "More area codes, please." })).status).toBe("open");
  expect((await ok("list_feedback")).data).toHaveLength(1);
  expect((await ok("delete_agent", { agent_id: other.agent_id })).deleted).toBe(true);

  // Every tool has now answered at least once.
  expect([...mcp.succeeded].sort()).toEqual(
    toolsFor({ carrier: "sandbox" })
      .map((t) => t.name)
      .sort(),
  );
  expect(mcp.transportErrors).toEqual([]);
}

describe("MCP tools over Streamable HTTP", () => {
  let service: TestService;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "true" } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.stop();
  });

  it("lists every tool with valid schemas, and every tool's result matches its outputSchema", async () => {
    const account = await createAccount(service.core);
    const mcp = await httpMcp(service.baseUrl, account.apiKey);
    try {
      await tour(mcp, receiver.url);
    } finally {
      await mcp.close();
    }
  });
});

describe("what tools/list and the events tell a model", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.stop());

  it("keeps tools/list under 40 KB, in tool words, every tool with an outputSchema", async () => {
    const account = await createAccount(service.core);
    const res = await fetch(`${service.baseUrl}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${account.apiKey}`, accept: "application/json, text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    const body = await res.text();
    // It is read into the model's context on every conversation (128 KB before decision 0088).
    expect(Buffer.byteLength(body)).toBeLessThan(40_000);
    const { tools } = JSON.parse(body.slice(body.indexOf("{"))).result as { tools: Array<Record<string, any>> };
    for (const tool of tools) expect(tool.outputSchema?.type, tool.name).toBe("object");
    // Routes are REST's words: through MCP, the tool is named.
    expect(body).not.toMatch(/\b(GET|POST|PUT|PATCH|DELETE) \/|\/v1\//);
    expect(body).not.toContain("[2468][048]");
  });

  it("tells wait_for_event and push_context of the automatic filler: once per turn, a late answer still spoken, none of their own", async () => {
    const mcp = await httpMcp(service.baseUrl, (await createAccount(service.core)).apiKey);
    try {
      const { tools } = await mcp.client.listTools();
      for (const name of ["wait_for_event", "push_context"]) {
        const text = tools.find((t) => t.name === name)!.description!;
        // The defaults the text names are the service's own (core/config/turns.ts).
        expect(text, name).toContain(`"${turnSettings.shape.TURN_FILLER_TEXT.parse(undefined)}"`);
        expect(text, name).toContain(`turn timeout (${turnSettings.shape.TURN_TIMEOUT_MS.parse(undefined) / 1000} s by default)`);
        expect(text, name).toMatch(/itself, once per turn/);
        expect(text, name).toMatch(/later answer is still spoken/);
        expect(text, name).toMatch(/Never send a filler of your own/);
      }
    } finally {
      await mcp.close();
    }
  });

  it("shows a call.utterance without push token, answer URL or conversation, naming the other party's and the agent's numbers", async () => {
    const account = await createAccount(service.core);
    const mcp = await httpMcp(service.baseUrl, account.apiKey);
    try {
      const agent = await mcp.ok("create_agent", { name: "Sides" });
      const number = await mcp.ok("buy_number", { agent_id: agent.agent_id });
      // Outbound: the call's from_number is the agent's own.
      const outbound = await mcp.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });
      const first = await mcp.ok("simulate_caller_speech", { call_id: outbound.call_id, text: "Hello?" });
      await mcp.ok("push_context", { call_id: outbound.call_id, turn_id: first.turn_id, text: "Hi, this is Sides." });
      await mcp.ok("simulate_caller_speech", { call_id: outbound.call_id, text: "Who?" });
      // Inbound: the call's from_number is the other party's.
      const inbound = await mcp.ok("simulate_inbound_call", { to_number: number.phone_number, from_number: "+14155550199" });
      await mcp.ok("simulate_caller_speech", { call_id: inbound.call_id, text: "Are you open?" });

      // The spec's envelope, as the relay, webhooks and the REST mailbox carry it, is unchanged.
      const rest = await fetch(`${service.baseUrl}/v1/events/peek?agent_id=${agent.agent_id}&limit=100`, {
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      const restUtterances = ((await rest.json()) as { data: any[] }).data.filter((e) => e.event_type === "call.utterance");
      expect(restUtterances).toHaveLength(3);
      expect(restUtterances[1]).toMatchObject({
        push_token: expect.stringMatching(/^pt_/),
        push_context_url: expect.any(String),
        session_key: expect.any(String),
      });
      expect(restUtterances[1].conversation.map((l: any) => l.text)).toEqual(["Hello?", "Hi, this is Sides.", "Who?"]);
      expect(restUtterances[1].payload).toMatchObject({ from_number: number.phone_number, to_number: "+14155550142" });

      const peeked = (await mcp.ok("peek_events", { agent_id: agent.agent_id, limit: 100 })).data.filter((e: any) => e.event_type === "call.utterance");
      const waited = (await mcp.ok("wait_for_event", { agent_id: agent.agent_id, event_types: ["call.utterance"], timeout_seconds: 5, limit: 100 })).events;
      for (const seen of [peeked, waited]) {
        expect(seen.map((e: any) => e.event_id)).toEqual(restUtterances.map((e) => e.event_id));
        for (const event of seen)
          expect(Object.keys(event).sort()).toEqual(["account_id", "agent_id", "call_id", "created_at", "event_id", "event_type", "payload", "turn_id"]);
        expect(seen.map((e: any) => e.payload)).toEqual([
          { text: "Hello?", input: "speech", is_owner_call: false, other_party_number: "+14155550142", agent_number: number.phone_number },
          { text: "Who?", input: "speech", is_owner_call: false, other_party_number: "+14155550142", agent_number: number.phone_number },
          { text: "Are you open?", input: "speech", is_owner_call: false, other_party_number: "+14155550199", agent_number: number.phone_number },
        ]);
      }
    } finally {
      await mcp.close();
    }
  });

  it("answers a wait about a call that has ended at once: what is pending, then a hint that nothing more will come", async () => {
    const mcp = await httpMcp(service.baseUrl, (await createAccount(service.core)).apiKey);
    try {
      const agent = await mcp.ok("create_agent", { name: "Ended" });
      await mcp.ok("buy_number", { agent_id: agent.agent_id });
      const call = await mcp.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });

      // Live, with nothing pending: it waits its timeout, with no hint.
      let started = Date.now();
      const live = await mcp.ok("wait_for_event", { call_id: call.call_id, timeout_seconds: 1 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      expect(live).toMatchObject({ events: [], timed_out: true });
      expect(live.hint).toBeUndefined();

      await mcp.ok("hang_up_call", { call_id: call.call_id });
      started = Date.now();
      const last = await mcp.ok("wait_for_event", { call_id: call.call_id, timeout_seconds: 30, limit: 100 });
      expect(last.events.map((e: any) => e.event_type)).toContain("call.completed");
      expect(last.hint).toBeUndefined();
      // With its cursor (the filters it remembers), and with types that will never come: at once, saying why.
      for (const args of [{ cursor: last.cursor }, { call_id: call.call_id, event_types: ["call.utterance"] }]) {
        const after = await mcp.ok("wait_for_event", { ...args, timeout_seconds: 30 });
        expect(after).toMatchObject({ events: [], timed_out: true });
        expect(after.hint).toMatch(new RegExp(`^Call ${call.call_id} has ended \\(completed\\).*nothing more will arrive`));
      }
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await mcp.close();
    }
  });
});

describe("MCP tools over stdio (agentline mcp)", () => {
  let database: Awaited<ReturnType<typeof databaseForProcess>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    database = await databaseForProcess();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await database?.drop();
  });

  it("lists every tool with valid schemas, every result matches its outputSchema, and logs only on stderr", async () => {
    const env = { ...database.env, ALLOW_PRIVATE_WEBHOOKS: "true", SIGNUP_CREDIT_USD: "50" };
    const { api_key } = adminCommand(env, ["api-key", "--email", "stdio@example.com"]);
    const mcp = await stdioMcp({ ...env, AGENTLINE_API_KEY: api_key });
    try {
      await tour(mcp, receiver.url);
      // The logs went to stderr (stdout carried only protocol messages: a stray line there would be a transport error).
      expect(mcp.stderr()).toContain('"msg":"mcp server on stdio"');
      expect(mcp.stderr()).toContain('"tool":"place_call"');
    } finally {
      await mcp.close();
    }
  }, 120_000);
});
