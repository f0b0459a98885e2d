import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { httpMcp, type McpSession } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// place_call's voicemail and recording options (machine_detection, voicemail_message, record),
// through the MCP SDK's own client over /mcp, on the sandbox.
let service: TestService;
let account: TestAccount;
let api: Api;
let mcp: McpSession;

beforeAll(async () => {
  service = await startTestService();
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  mcp = await httpMcp(service.baseUrl, account.apiKey);
});
afterAll(async () => {
  await mcp?.close();
  await service?.stop();
});

describe("place_call with voicemail and recording options", () => {
  it("lists the options in the tool's input schema", async () => {
    const { tools } = await mcp.client.listTools();
    const placeCall = tools.find((t) => t.name === "place_call")!;
    expect(Object.keys(placeCall.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["machine_detection", "voicemail_message", "record"]));
  });

  it("leave_message on a voicemail box: the message is left and the call ends; record: the notice comes first", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await mcp.ok("place_call", {
      agent_id: agentId,
      to_number: "+14155550004",
      machine_detection: "leave_message",
      voicemail_message: "Your table for four is confirmed for eight tonight.",
      record: true,
    });
    expect(call).toMatchObject({ status: "completed", answered_by: "machine", voicemail_left: true, record: true });
    const transcript = await mcp.ok("get_transcript", { call_id: call.call_id });
    expect(transcript.transcript.map((l: any) => l.text)).toEqual([service.core.config.recordingNotice, "Your table for four is confirmed for eight tonight."]);
    const waited = await mcp.ok("wait_for_event", { call_id: call.call_id, event_types: ["call.answered_by", "call.recording.ready"], timeout_seconds: 5 });
    expect(waited.events.map((e: any) => e.event_type).sort()).toEqual(["call.answered_by", "call.recording.ready"]);
  });

  it("leave_message without a message fails as a tool, naming voicemail_message, and places no call", async () => {
    const { agentId } = await agentWithNumber(api);
    const text = await mcp.fails("place_call", { agent_id: agentId, to_number: "+14155550004", machine_detection: "leave_message" });
    expect(text).toContain("voicemail_message");
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });
});
