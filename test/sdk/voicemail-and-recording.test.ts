import { Agentline, type AgentlineEvent, unwrap } from "@agentline/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { startTestService, type TestService } from "../support/service.js";

// The SDK's generated client with the voicemail and recording options (sandbox): placing a call,
// setting record_inbound, reading the typed events, downloading and deleting the recording.
let service: TestService;
let agentline: Agentline;

beforeAll(async () => {
  service = await startTestService();
  const account = await createAccount(service.core);
  agentline = new Agentline({ baseUrl: service.baseUrl, apiKey: account.apiKey });
});
afterAll(() => service?.stop());

describe("the SDK", () => {
  it("places a recorded call with machine detection, then downloads and deletes the recording", async () => {
    const agent = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Reminders" } }));
    const number = unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agent.agent_id } }));
    const updated = unwrap(
      await agentline.api.PATCH("/v1/numbers/{number_id}", { params: { path: { number_id: number.number_id } }, body: { record_inbound: true } }),
    );
    expect(updated.record_inbound).toBe(true);

    const call = unwrap(
      await agentline.api.POST("/v1/calls", {
        body: { agent_id: agent.agent_id, to_number: "+14155550142", machine_detection: "detect", record: true },
      }),
    );
    expect(call).toMatchObject({ answered_by: "human", voicemail_left: false, record: true });
    unwrap(await agentline.api.POST("/v1/calls/{call_id}/hangup", { params: { path: { call_id: call.call_id } } }));

    const polled = unwrap(await agentline.api.GET("/v1/events", { params: { query: { agent_id: agent.agent_id, limit: 100 } } }));
    const events = polled.data as AgentlineEvent[];
    const answered = events.find((e): e is AgentlineEvent<"call.answered_by"> => e.event_type === "call.answered_by")!;
    expect(answered.payload.answered_by).toBe("human");
    const ready = events.find((e): e is AgentlineEvent<"call.recording.ready"> => e.event_type === "call.recording.ready")!;
    expect(ready.payload.recording_id).toMatch(/^rec_/);

    const audio = await agentline.api.GET("/v1/calls/{call_id}/recording", { params: { path: { call_id: call.call_id } }, parseAs: "arrayBuffer" });
    expect(audio.response.status).toBe(200);
    expect(
      Buffer.from(audio.data as ArrayBuffer)
        .subarray(0, 4)
        .toString("ascii"),
    ).toBe("RIFF");

    const deleted = await agentline.api.DELETE("/v1/calls/{call_id}/recording", { params: { path: { call_id: call.call_id } } });
    expect(deleted.response.status).toBe(204);
    const gone = await agentline.api.GET("/v1/calls/{call_id}/recording", { params: { path: { call_id: call.call_id } }, parseAs: "arrayBuffer" });
    expect(gone.response.status).toBe(404);
  });

  it("hands call.answered_by and call.recording.ready to typed relay handlers", async () => {
    const agent = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Relay" } }));
    unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agent.agent_id } }));
    const answered: string[] = [];
    const ready: number[] = [];
    const connection = agentline.relay(agent.agent_id, {
      "call.answered_by": (event) => {
        answered.push(`${event.payload.answered_by}:${event.payload.voicemail_left}`);
      },
      "call.recording.ready": (event) => {
        ready.push(event.payload.duration_s);
      },
    });
    try {
      await connection.ready;
      unwrap(
        await agentline.api.POST("/v1/calls", {
          body: { agent_id: agent.agent_id, to_number: "+14155550004", machine_detection: "leave_message", voicemail_message: "Bye.", record: true },
        }),
      );
      const deadline = Date.now() + 5_000;
      while ((answered.length === 0 || ready.length === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(answered).toEqual(["machine:true"]);
      expect(ready).toHaveLength(1);
    } finally {
      await connection.close();
    }
  });
});
