import { readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { projectRoot } from "../../harness/process.js";
import { RelayClient } from "../../harness/relay-client.js";
import { readRelayTwiml } from "../../harness/twilio/relay-leg.js";
import { twilioSignature } from "../../harness/twilio/signing.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { type RawFrame, RawWebSocket } from "../support/raw-websocket.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { agentWithTwilioNumber, connectedTwilioCall, startTwilioService, type TwilioTestService, waitFor } from "../support/twilio/service.js";

// A hostile or broken client on every WebSocket the service accepts: malformed frames close that
// socket with the code RFC 6455 names for them, and the process goes on serving other tenants.
let sandbox: TestService;
let sandboxApi: Api;
let sandboxKey: string;
let sandboxBystander: Bystander;
let twilio: TwilioTestService;
let twilioApi: Api;
let twilioBystander: Bystander;
const twilioLog: Array<Record<string, any>> = [];
// Errors no handler took: in a service process of its own, each would have ended it.
const escaped: unknown[] = [];
const hear = (error: unknown) => void escaped.push(error);

beforeAll(async () => {
  process.on("uncaughtException", hear);
  [sandbox, twilio] = await Promise.all([
    startTestService(),
    startTwilioService({}, { logger: createLogger("info", { write: (line: string) => void twilioLog.push(JSON.parse(line)) }) }),
  ]);
  const account = await createAccount(sandbox.core);
  sandboxKey = account.apiKey;
  sandboxApi = new Api(sandbox.baseUrl, sandboxKey);
  twilioApi = new Api(twilio.service.baseUrl, (await createAccount(twilio.service.core)).apiKey);
  [sandboxBystander, twilioBystander] = await Promise.all([bystander(sandbox), bystander(twilio.service)]);
});
beforeEach(() => void escaped.splice(0));
afterAll(async () => {
  process.off("uncaughtException", hear);
  await Promise.all([sandbox?.stop(), twilio?.stop()]);
});

const wsUrl = (base: string, path: string) => `${base.replace(/^http/, "ws")}${path}`;

async function openRelay(): Promise<RawWebSocket> {
  const { agentId } = await agentWithNumber(sandboxApi);
  return RawWebSocket.open(wsUrl(sandbox.baseUrl, `/v1/events/ws?agent_id=${agentId}`), { Authorization: `Bearer ${sandboxKey}` });
}

async function openSoftphone(): Promise<RawWebSocket> {
  const { agentId } = await agentWithNumber(sandboxApi);
  const callId = await answeredCall(sandboxApi, agentId);
  return RawWebSocket.open(wsUrl(sandbox.baseUrl, `/v1/sandbox/calls/${callId}/ws`), { Authorization: `Bearer ${sandboxKey}` });
}

/** A ringing call's ConversationRelay socket, opened as Twilio opens it (signed). */
async function openCarrierSocket(): Promise<RawWebSocket> {
  const { agentId } = await agentWithTwilioNumber(twilioApi);
  expect((await twilioApi.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" })).status).toBe(201);
  const call = twilio.twilio.lastCall();
  await twilio.twilio.ring(call.sid);
  const url = readRelayTwiml(call.twiml ?? "")!.url;
  return RawWebSocket.open(url, { "X-Twilio-Signature": twilioSignature(twilio.twilio.authToken, url) });
}

interface Endpoint {
  name: string;
  maxPayload: number;
  open(): Promise<RawWebSocket>;
  /** The frame the endpoint greets a new socket with, if any. */
  greeting?: string;
  bystander(): Bystander;
}

const ENDPOINTS: Endpoint[] = [
  { name: "the relay", maxPayload: 256 * 1024, open: openRelay, greeting: "ready", bystander: () => sandboxBystander },
  { name: "the sandbox softphone", maxPayload: 64 * 1024, open: openSoftphone, greeting: "status", bystander: () => sandboxBystander },
  { name: "the Twilio ConversationRelay socket", maxPayload: 256 * 1024, open: openCarrierSocket, bystander: () => twilioBystander },
];

// 1009: too big; 1007: a text frame that is not UTF-8; 1002: anything else against the protocol.
const MALFORMED: Array<{ what: string; frames: (maxPayload: number) => RawFrame[]; code: number }> = [
  { what: "a frame over its maxPayload", frames: (max) => [{ opcode: 0x1, payload: "x".repeat(64), declaredLength: max + 1 }], code: 1009 },
  { what: "a text frame that is not UTF-8", frames: () => [{ opcode: 0x1, payload: Buffer.from([0x7b, 0xc3, 0x28, 0x7d]) }], code: 1007 },
  { what: "an unknown opcode", frames: () => [{ opcode: 0x3, payload: "{}" }], code: 1002 },
  { what: "reserved bits set", frames: () => [{ opcode: 0x1, rsv: 4, payload: "{}" }], code: 1002 },
  { what: "a continuation frame with no message to continue", frames: () => [{ opcode: 0x0, payload: "garbage" }], code: 1002 },
  {
    what: "a new message in the middle of a fragmented one",
    frames: () => [
      { opcode: 0x1, fin: false, payload: '{"ty' },
      { opcode: 0x1, payload: "garbage" },
    ],
    code: 1002,
  },
  { what: "a fragmented control frame", frames: () => [{ opcode: 0x9, fin: false, payload: "ping" }], code: 1002 },
  { what: "an unmasked client frame", frames: () => [{ opcode: 0x1, masked: false, payload: "{}" }], code: 1002 },
];

describe.each(ENDPOINTS)("$name, given malformed frames", (endpoint) => {
  it.each(MALFORMED)("closes on $what with $code, and the service serves everyone else", async ({ frames, code }) => {
    const socket = await endpoint.open();
    if (endpoint.greeting) await socket.next((f) => f.type === endpoint.greeting);
    const during = endpoint.bystander().check();
    for (const frame of frames(endpoint.maxPayload)) socket.send(frame);
    expect((await socket.ended).code).toBe(code);
    expect(escaped).toEqual([]);
    await during;
    await endpoint.bystander().check();
    // The endpoint itself still accepts sockets.
    const next = await endpoint.open();
    if (endpoint.greeting) await next.next((f) => f.type === endpoint.greeting);
    next.reset();
  });

  it("forgets a client that resets the connection in the middle of a frame", async () => {
    const socket = await endpoint.open();
    if (endpoint.greeting) await socket.next((f) => f.type === endpoint.greeting);
    const during = endpoint.bystander().check();
    // A header announcing 1,000 bytes, ten of them, then a TCP reset.
    socket.write(Buffer.from([0x81, 0x80 | 126, 0x03, 0xe8, 1, 2, 3, 4, ...Buffer.from("0123456789")]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.reset();
    expect((await socket.ended).code).toBeUndefined();
    expect(escaped).toEqual([]);
    await during;
    await endpoint.bystander().check();
    const next = await endpoint.open();
    if (endpoint.greeting) await next.next((f) => f.type === endpoint.greeting);
    next.reset();
  });
});

describe("text that cannot be stored, in a socket message", () => {
  it("the relay refuses an ack id holding a NUL or a lone surrogate with an error frame naming the field", async () => {
    const { agentId } = await agentWithNumber(sandboxApi);
    const relay = await RelayClient.connect(sandbox.baseUrl, { agent_id: agentId }, sandboxKey);
    relay.send({ type: "ack", event_id: "evt_\u0000" });
    expect(await relay.next((f) => f.type === "error")).toMatchObject({ code: "validation_error", field: "event_id", message: expect.stringContaining("NUL") });
    const from = relay.frames.length;
    relay.send({ type: "ack", event_ids: ["evt_fine", "evt_\ud800"] });
    expect(await relay.next((f) => f.type === "error", 5_000, from)).toMatchObject({ code: "validation_error", field: "event_ids.1" });
    await sandboxBystander.check();
    expect(relay.ws.readyState).toBe(relay.ws.OPEN);
    await relay.close();
  });

  it("the relay and the softphone refuse a frame nested past the JSON limits before building it, and go on", async () => {
    const deep = "[".repeat(5_000) + "]".repeat(5_000);
    const { agentId } = await agentWithNumber(sandboxApi);
    const relay = await RelayClient.connect(sandbox.baseUrl, { agent_id: agentId }, sandboxKey);
    relay.ws.send(deep);
    expect(await relay.next((f) => f.type === "error")).toMatchObject({ code: "malformed_json", message: expect.stringContaining("64 levels") });
    expect(relay.ws.readyState).toBe(relay.ws.OPEN);
    await relay.close();
    const phone = await Softphone.connect(sandbox.baseUrl, await answeredCall(sandboxApi, agentId), sandboxKey);
    phone.ws.send(`{"type":"say","text":"hi","x":${deep}}`);
    await waitFor(() => phone.frames.some((f) => f.type === "error" && f.code === "malformed_json"));
    expect(await phone.say("still here")).toMatch(/^turn_/);
    await sandboxBystander.check();
    await phone.close();
  });
  it("the softphone refuses `say` text holding a NUL with an error frame naming the field, and goes on", async () => {
    const { agentId } = await agentWithNumber(sandboxApi);
    const phone = await Softphone.connect(sandbox.baseUrl, await answeredCall(sandboxApi, agentId), sandboxKey);
    await expect(phone.say("hello\u0000there")).rejects.toThrow(/validation_error/);
    expect(phone.frames.find((f) => f.type === "error")).toMatchObject({ field: "text" });
    await expect(phone.say("hello \ud83d")).rejects.toThrow(/validation_error/);
    expect(await phone.say("hello there")).toMatch(/^turn_/);
    await sandboxBystander.check();
    await phone.close();
  });

  it("the Twilio socket drops a prompt holding a NUL before the database, logging the field, and the call goes on", async () => {
    const { agentId } = await agentWithTwilioNumber(twilioApi);
    const { leg } = await connectedTwilioCall(twilioApi, twilio.twilio, agentId);
    leg.say("hello\u0000there");
    await waitFor(() => twilioLog.some((line) => line.msg?.startsWith("ConversationRelay frame refused") && line.field === "voicePrompt"));
    leg.say("hello there");
    await waitFor(async () =>
      (await twilioApi.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data.some((e: any) => e.event_type === "call.utterance"),
    );
    const utterances = (await twilioApi.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data.filter(
      (e: any) => e.event_type === "call.utterance",
    );
    expect(utterances.map((e: any) => e.payload.text)).toEqual(["hello there"]);
    expect(twilioLog.filter((line) => line.msg === "ConversationRelay frame not applied")).toEqual([]);
    await twilioBystander.check();
    leg.close();
  });
});

/** The status and body of an upgrade request written by hand (a URL `ws` would not send). */
async function rawUpgrade(requestTarget: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const socket = connect(sandbox.port, "127.0.0.1");
  socket.on("error", () => {});
  const lines = [
    `GET ${requestTarget} HTTP/1.1`,
    "Host: localhost",
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
  ];
  socket.write([...lines, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n"));
  let text = "";
  socket.on("data", (chunk) => (text += chunk));
  await new Promise((resolve) => socket.once("close", resolve));
  const [head, body] = [text.slice(0, text.indexOf("\r\n\r\n")), text.slice(text.indexOf("\r\n\r\n") + 4)];
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: body ? JSON.parse(body) : undefined };
}

describe("upgrade URLs no endpoint could read", () => {
  it("refuses a relay agent_id holding a NUL with a 422 naming it", async () => {
    const res = await rawUpgrade("/v1/events/ws?agent_id=agt_%00", { Authorization: `Bearer ${sandboxKey}` });
    expect(res).toMatchObject({ status: 422, body: { code: "validation_error", errors: [{ field: "agent_id", in: "query" }] } });
    await sandboxBystander.check();
  });

  it("answers a softphone path holding a NUL, or one that does not decode, as not found", async () => {
    for (const path of ["/v1/sandbox/calls/call_%00/ws", "/v1/sandbox/calls/call_%E0%A4%A/ws"]) {
      expect(await rawUpgrade(path, { Authorization: `Bearer ${sandboxKey}` })).toMatchObject({ status: 404, body: { code: "not_found" } });
    }
    await sandboxBystander.check();
  });

  it("answers an upgrade whose URL does not parse with a 400, and keeps serving", async () => {
    expect(await rawUpgrade("http://[", {})).toMatchObject({ status: 400, body: { code: "bad_request" } });
    expect(escaped).toEqual([]);
    await sandboxBystander.check();
  });
});

describe("the one way to accept a WebSocket", () => {
  it("is gateway/ws/accept.ts: no other server code makes a WebSocketServer", () => {
    const makers: string[] = [];
    for (const dir of ["gateway", "core", "mcp", "payments", "discovery"]) {
      for (const file of readdirSync(join(projectRoot, dir), { recursive: true }) as string[]) {
        if (!file.endsWith(".ts") || file.endsWith(".test.ts")) continue;
        if (/new WebSocketServer\b|\.handleUpgrade\(/.test(readFileSync(join(projectRoot, dir, file), "utf8"))) makers.push(join(dir, file));
      }
    }
    expect(makers).toEqual([join("gateway", "ws", "accept.ts")]);
  });
});
