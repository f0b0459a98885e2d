import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOf, charge } from "../../core/billing/ledger.js";
import { applyRecordingReady } from "../../core/calls/recordings.js";
import { CarrierRefusal, CarrierUnavailable } from "../../core/carrier/carrier.js";
import { ledgerEntries } from "../../core/db/schema/ledger-entries.js";
import { recordings } from "../../core/db/schema/recordings.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { coreWithCarrier } from "../support/failing-carrier.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, drainEvents } from "../support/telephony.js";

// Recording on the sandbox (core/calls/recordings.ts): record on a placed call, record_inbound on a
// number; the notice comes first; call.recording.ready at the end; the audio proxied by the service
// (a generated WAV); deleting it; billed at ready for the first month of storage.
const NOTICE = "This call may be recorded for training.";
const RATE_MICROS = 2_000; // RATE_RECORDING_PER_MINUTE_MONTH_USD below, per minute-month
let service: TestService;
let account: TestAccount;
let api: Api;
let other: Api;

beforeAll(async () => {
  service = await startTestService({ env: { RECORDING_NOTICE: NOTICE, RATE_RECORDING_PER_MINUTE_MONTH_USD: "0.002" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  other = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
});
afterAll(() => service?.stop());

/** The recording's bytes, as a client downloads them (fetch: the body is binary). */
async function download(callId: string, key = account.apiKey) {
  const res = await fetch(`${service.baseUrl}/v1/calls/${callId}/recording`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, type: res.headers.get("content-type"), bytes: Buffer.from(await res.arrayBuffer()) };
}

async function recordingLedger(callId: string) {
  return service.core.db
    .select()
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.callId, callId), eq(ledgerEntries.category, "recording")));
}

/** A recorded outbound call, hung up by the far party: its id and agent, its events drained. */
async function recordedCall() {
  const { agentId } = await agentWithNumber(api);
  const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142", record: true });
  expect(call.status).toBe(201);
  expect(call.body).toMatchObject({ status: "in-progress", record: true });
  await api.post(`/v1/sandbox/calls/${call.body.call_id}/say`, { text: "Hello, who is this?" });
  expect((await api.post(`/v1/sandbox/calls/${call.body.call_id}/hangup`)).status).toBeLessThan(300);
  return { agentId, callId: call.body.call_id as string, events: await drainEvents(api, agentId) };
}

describe("a recorded outbound call", () => {
  it("starts with the notice, and ends with call.recording.ready and its audio, billed at ready", async () => {
    const { callId, events } = await recordedCall();
    const transcript = (await api.get(`/v1/calls/${callId}/transcript`)).body;
    expect(transcript.map((l: any) => [l.role, l.text])).toEqual([
      ["assistant", NOTICE],
      ["user", "Hello, who is this?"],
    ]);
    const types = events.map((e) => e.event_type);
    expect(types.indexOf("call.completed")).toBeLessThan(types.indexOf("call.recording.ready"));
    const ready = events.find((e) => e.event_type === "call.recording.ready");
    expect(ready.payload).toMatchObject({
      call_id: callId,
      recording_id: expect.stringMatching(/^rec_/),
      duration_s: expect.any(Number),
      recording_url: `${service.baseUrl}/v1/calls/${callId}/recording`,
      charge: "0.002000",
      currency: "USD",
    });
    expect(JSON.stringify(ready)).not.toMatch(/SBRE|twilio/i);

    const audio = await download(callId);
    expect(audio.status).toBe(200);
    expect(audio.type).toBe("audio/wav");
    expect(audio.bytes.subarray(0, 4).toString("ascii")).toBe("RIFF");
    expect(audio.bytes.subarray(8, 12).toString("ascii")).toBe("WAVE");
    expect(audio.bytes.readUInt32LE(4)).toBe(audio.bytes.length - 8);
    // 8 kHz, 16-bit mono: at least a tenth of a second, at most the 30 s cap.
    expect(audio.bytes.length).toBeGreaterThanOrEqual(44 + 1600);
    expect(audio.bytes.length).toBeLessThanOrEqual(44 + 30 * 16000);

    const charged = await recordingLedger(callId);
    expect(charged.map((r) => [r.amountMicros, r.item, r.quantity])).toEqual([[-RATE_MICROS, "recording.storage", 1]]);
  });

  it("an unrecorded call has no recording: 404, and no recording event or charge", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    await api.post(`/v1/calls/${call.body.call_id}/hangup`);
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).not.toContain("call.recording.ready");
    expect((await download(call.body.call_id)).status).toBe(404);
    expect((await api.delete(`/v1/calls/${call.body.call_id}/recording`)).status).toBe(404);
    expect(await recordingLedger(call.body.call_id)).toEqual([]);
  });

  it("an agent's hang-up also finishes the recording", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142", record: true });
    await api.post(`/v1/calls/${call.body.call_id}/hangup`);
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toContain("call.recording.ready");
    expect((await download(call.body.call_id)).status).toBe(200);
  });
});

describe("a recording refused", () => {
  it("to another account: 404 on GET and DELETE, and the recording is untouched", async () => {
    const { callId } = await recordedCall();
    const before = await service.core.db.select().from(recordings).where(eq(recordings.callId, callId));
    const foreignKey = other.key!;
    expect((await download(callId, foreignKey)).status).toBe(404);
    const deleted = await other.delete(`/v1/calls/${callId}/recording`);
    expect(deleted.status).toBe(404);
    expect(deleted.body.code).toBe("not_found");
    expect(await service.core.db.select().from(recordings).where(eq(recordings.callId, callId))).toEqual(before);
    expect((await download(callId)).status).toBe(200);
  });

  it("without a key: 401", async () => {
    const { callId } = await recordedCall();
    expect((await download(callId, "")).status).toBe(401);
  });
});

describe("deleting a recording", () => {
  it("deletes it at the carrier too; afterwards GET and DELETE are 404, and the bill stands", async () => {
    const { callId } = await recordedCall();
    const [row] = await service.core.db.select().from(recordings).where(eq(recordings.callId, callId));
    const deleted = await api.delete(`/v1/calls/${callId}/recording`);
    expect(deleted.status).toBe(204);
    expect((await download(callId)).status).toBe(404);
    expect((await service.core.db.select().from(recordings).where(eq(recordings.callId, callId)))[0]!.status).toBe("deleted");
    expect((await api.get(`/v1/calls/${callId}/recording`)).body.detail).toBe(`No recording of call with id "${callId}" exists on this account.`);
    expect((await api.delete(`/v1/calls/${callId}/recording`)).status).toBe(404);
    // The carrier no longer serves it either.
    await expect(service.core.carrier.fetchRecording({ carrierRef: row!.carrierRef, durationSeconds: 1 })).rejects.toThrow(/deleted/);
    expect((await recordingLedger(callId)).length).toBe(1);
  });
});

describe("recording inbound calls (record_inbound on the number)", () => {
  it("PATCH sets it; an inbound call then starts with the notice and is recorded", async () => {
    const { agentId, numberId, phoneNumber } = await agentWithNumber(api);
    const patched = await api.patch(`/v1/numbers/${numberId}`, { record_inbound: true });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ number_id: numberId, record_inbound: true });
    const ring = await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550177" });
    expect(ring.status).toBe(201);
    const callId = ring.body.call_id;
    expect((await api.get(`/v1/calls/${callId}`)).body.record).toBe(true);
    expect((await api.get(`/v1/calls/${callId}/transcript`)).body.map((l: any) => l.text)).toEqual([NOTICE]);
    await api.post(`/v1/sandbox/calls/${callId}/hangup`);
    const ready = (await drainEvents(api, agentId)).find((e) => e.event_type === "call.recording.ready");
    expect(ready.payload.call_id).toBe(callId);
    expect((await download(callId)).status).toBe(200);
  });

  it("off (the default): nothing is said or recorded", async () => {
    const { numberId, phoneNumber } = await agentWithNumber(api);
    expect((await api.get(`/v1/numbers/${numberId}`)).body.record_inbound).toBe(false);
    const ring = await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550177" });
    expect((await api.get(`/v1/calls/${ring.body.call_id}/transcript`)).body).toEqual([]);
    await api.post(`/v1/sandbox/calls/${ring.body.call_id}/hangup`);
    expect((await download(ring.body.call_id)).status).toBe(404);
  });

  it("PATCH refused: another account's number 404, a released number 409, a bad body 422; nothing changes", async () => {
    const { numberId } = await agentWithNumber(api);
    expect((await other.patch(`/v1/numbers/${numberId}`, { record_inbound: true })).status).toBe(404);
    const bad = await api.patch(`/v1/numbers/${numberId}`, { record_inbound: "yes" });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.field)).toEqual(["record_inbound"]);
    expect((await api.get(`/v1/numbers/${numberId}`)).body.record_inbound).toBe(false);
    await api.post(`/v1/numbers/${numberId}/release`);
    const released = await api.patch(`/v1/numbers/${numberId}`, { record_inbound: true });
    expect(released.status).toBe(409);
    expect((await api.get(`/v1/numbers/${numberId}`)).body.record_inbound).toBe(false);
  });
});

describe("the carrier's report of a ready recording", () => {
  it("repeated: one recording, one charge, one event", async () => {
    const { agentId, callId } = await recordedCall();
    const [row] = await service.core.db.select().from(recordings).where(eq(recordings.callId, callId));
    await service.core.callEngine.recordingReady({ callId, carrierRef: row!.carrierRef, durationSeconds: row!.durationSeconds });
    await service.core.callEngine.recordingReady({ callId, carrierRef: "SBRE-another", durationSeconds: 99 });
    expect(await service.core.db.select().from(recordings).where(eq(recordings.callId, callId))).toEqual([row]);
    expect(await recordingLedger(callId)).toHaveLength(1);
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).not.toContain("call.recording.ready");
  });

  it("a balance that cannot pay the storage: no recording, no event, no charge, and it is deleted at the carrier", async () => {
    const poor = await createAccount(service.core);
    const poorApi = new Api(service.baseUrl, poor.apiKey);
    const { agentId } = await agentWithNumber(poorApi);
    const call = await poorApi.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142", record: true });
    await drainEvents(poorApi, agentId);
    // The carrier's report comes after the balance went: spend it all (a ledger row, as any charge).
    const ended = service.core.carrier.dropCall;
    service.core.carrier.dropCall = async () => {};
    try {
      await poorApi.post(`/v1/calls/${call.body.call_id}/hangup`);
    } finally {
      service.core.carrier.dropCall = ended;
    }
    await service.core.db.transaction(async (tx) => {
      const left = await balanceOf(tx, poor.accountId);
      await charge(tx, { accountId: poor.accountId, category: "call", description: "test: spend it all", at: new Date() }, left, "the rest");
    });
    await service.core.carrier.dropCall({ callId: call.body.call_id, carrierRef: null, status: "completed" });
    const [row] = await service.core.db.select().from(recordings).where(eq(recordings.callId, call.body.call_id));
    expect(row).toMatchObject({ status: "deleted", chargedMicros: 0 });
    expect(await recordingLedger(call.body.call_id)).toEqual([]);
    expect((await drainEvents(poorApi, agentId)).map((e) => e.event_type)).not.toContain("call.recording.ready");
    expect((await download(call.body.call_id, poor.apiKey)).status).toBe(404);
    await expect(service.core.carrier.fetchRecording({ carrierRef: row!.carrierRef, durationSeconds: 1 })).rejects.toThrow(/deleted/);
  });
});

describe("the storage charged", () => {
  // Reported for unrecorded calls, so each report is the call's first; the ledger row and the
  // event say how many whole minutes are stored (rounded up, at least one).
  async function endedCall() {
    const { agentId } = await agentWithNumber(api);
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    await api.post(`/v1/calls/${call.body.call_id}/hangup`);
    await drainEvents(api, agentId);
    return { agentId, callId: call.body.call_id as string };
  }

  it("is whole minutes rounded up, at least one: 0 s, 60 s, 61 s, 125 s", async () => {
    for (const [seconds, minutes] of [
      [0, 1],
      [60, 1],
      [61, 2],
      [125, 3],
    ] as const) {
      const { agentId, callId } = await endedCall();
      await service.core.callEngine.recordingReady({ callId, carrierRef: `SBRE-${seconds}`, durationSeconds: seconds });
      const charged = await recordingLedger(callId);
      expect(charged.map((r) => [r.amountMicros, r.item, r.quantity, r.description])).toEqual([
        [-minutes * RATE_MICROS, "recording.storage", minutes, `Recording of call ${callId}: ${minutes} min stored, first month`],
      ]);
      const [row] = await service.core.db.select().from(recordings).where(eq(recordings.callId, callId));
      expect(row).toMatchObject({ status: "ready", durationSeconds: seconds, chargedMicros: minutes * RATE_MICROS, carrierRef: `SBRE-${seconds}` });
      const ready = (await drainEvents(api, agentId)).find((e) => e.event_type === "call.recording.ready");
      expect(ready.payload).toMatchObject({ duration_s: seconds, charge: (minutes * 0.002).toFixed(6), recording_id: row!.recordingId });
    }
  });

  it("nothing for a call that does not exist", async () => {
    await service.core.callEngine.recordingReady({ callId: "call_none", carrierRef: "SBRE-none", durationSeconds: 5 });
    expect(await service.core.db.select().from(recordings).where(eq(recordings.carrierRef, "SBRE-none"))).toEqual([]);
  });
});

describe("a carrier that cannot be reached", () => {
  it("GET and DELETE: 502 carrier_unavailable, and the recording is kept until the carrier deletes it", async () => {
    const { callId } = await recordedCall();
    const carrier = service.core.carrier;
    const { fetchRecording, deleteRecording } = carrier;
    const down = () => Promise.reject(new CarrierUnavailable("connection refused"));
    carrier.fetchRecording = down;
    carrier.deleteRecording = down;
    try {
      for (const res of [await api.get(`/v1/calls/${callId}/recording`), await api.delete(`/v1/calls/${callId}/recording`)]) {
        expect(res.status).toBe(502);
        expect(res.body.code).toBe("carrier_unavailable");
      }
    } finally {
      carrier.fetchRecording = fetchRecording;
      carrier.deleteRecording = deleteRecording;
    }
    expect((await download(callId)).status).toBe(200);
  });
});

describe("a carrier that refuses", () => {
  it("GET and DELETE of a recording it will not serve: 422 naming call_id, and the recording kept", async () => {
    const { callId } = await recordedCall();
    const carrier = service.core.carrier;
    const { fetchRecording, deleteRecording } = carrier;
    const refuse = () => Promise.reject(new CarrierRefusal("unsupported", "the recording cannot be served"));
    carrier.fetchRecording = refuse;
    carrier.deleteRecording = refuse;
    try {
      for (const res of [await api.get(`/v1/calls/${callId}/recording`), await api.delete(`/v1/calls/${callId}/recording`)]) {
        expect(res.status).toBe(422);
        expect(res.body.errors).toMatchObject([{ field: "call_id", message: "the recording cannot be served" }]);
      }
    } finally {
      carrier.fetchRecording = fetchRecording;
      carrier.deleteRecording = deleteRecording;
    }
    expect((await download(callId)).status).toBe(200);
  });

  it("to delete an unpaid recording: both logged with the call's id, and the report still taken", async () => {
    const poor = await createAccount(service.core);
    const { agentId } = await agentWithNumber(new Api(service.baseUrl, poor.apiKey));
    const call = await new Api(service.baseUrl, poor.apiKey).post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    await service.core.db.transaction(async (tx) => {
      await charge(
        tx,
        { accountId: poor.accountId, category: "call", description: "test: spend it all", at: new Date() },
        await balanceOf(tx, poor.accountId),
        "the rest",
      );
    });
    const { core, logged } = coreWithCarrier(service.core, { deleteRecording: () => Promise.reject(new Error("carrier down")) });
    const callId = call.body.call_id as string;
    await applyRecordingReady(core, { callId, carrierRef: "SBRE-unpaid", durationSeconds: 30 });
    expect(logged).toEqual([
      ["warn", { call_id: callId }, "the balance does not cover the recording's storage; it is deleted at the carrier"],
      ["error", { err: expect.any(Error), call_id: callId }, "the carrier did not delete an unpaid recording"],
    ]);
    expect((await service.core.db.select().from(recordings).where(eq(recordings.callId, callId)))[0]).toMatchObject({ status: "deleted" });
  });
});

describe("the rate card", () => {
  it("lists recording storage per minute-month", async () => {
    const card = await api.get("/v1/billing/balance");
    expect(card.body.rate_card.recordings).toEqual({ per_minute_month: "0.002000" });
  });
});
