import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LiveCallEngine } from "../../core/calls/call-engine.js";
import type { Core } from "../../core/context.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { coreWithCarrier } from "../support/failing-carrier.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";

// The call engine's filler timers: one per call, on the clock of the turn's first words. The
// turn timeout is short here so that the filler is heard within a test.
const TURN_TIMEOUT_MS = 700;
const FILLER = "Bear with me.";

let service: TestService;
let account: TestAccount;
let api: Api;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", TURN_TIMEOUT_MS: String(TURN_TIMEOUT_MS), TURN_FILLER_TEXT: FILLER } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());
beforeEach(async () => {
  receiver = await startReceiver(() => 202);
});
afterEach(() => receiver?.close());

describe("the carrier's signals", () => {
  it("take the caller's words as speech when the carrier does not say how they came", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const { turnId } = await service.core.callEngine.callerUtterance(callId, "Hello?");
    const [event] = await drainEvents(api, agentId);
    expect(event).toMatchObject({ event_type: "call.utterance", turn_id: turnId, payload: { text: "Hello?", input: "speech" } });
    expect(event.event_id).toMatch(/^evt_[0-9a-z]{26}$/);
  });
});

describe("the filler timer", () => {
  it("keeps the newer turn's filler when a close for an older turn of the call arrives late", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    const older = await phone.say("What time do you open?");
    const newer = await phone.say("Sorry, on Sundays?");
    // A final answer to the older turn, whose close reaches the engine after the newer turn opened
    // (the push and the utterance raced): the newer turn still waits for its answer.
    service.core.callEngine.turnClosed(callId, older);
    expect(await phone.next((f) => f.type === "speech", 5_000)).toEqual({ type: "speech", text: FILLER, final: false, turn_id: newer });
    await drainEvents(api, agentId);
    phone.close();
  });

  it("speaks the filler of a turn whose event went to a webhook", async () => {
    // Such a turn is opened by openTurn's transaction, not the one-trip function: it needs its timer too.
    const { agentId } = await agentWithNumber(api);
    expect((await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url })).status).toBe(201);
    const callId = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    const turn = await phone.say("Can you check my order?");
    expect(await phone.next((f) => f.type === "speech", 5_000)).toEqual({ type: "speech", text: FILLER, final: false, turn_id: turn });
    phone.close();
  });

  it("runs from the turn's first words: the caller adding words to the open turn does not restart it", async () => {
    // An engine of its own on the service's core, with a longer timeout: the caller's words come
    // every 200 ms, far inside it, so that a clock restarted by each of them would never run out
    // while they come. The softphone hears what that engine speaks, through the same carrier.
    const timeoutMs = 1_500;
    const core = Object.create(service.core, { config: { value: { ...service.core.config, turnTimeoutMs: timeoutMs } } }) as Core;
    const engine = new LiveCallEngine(core);
    const { agentId } = await agentWithNumber(api);
    // Protocol 2's supports_amend: more words grow the open turn instead of opening another.
    const hook = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities: ["supports_amend"] });
    expect(hook.status).toBe(201);
    const callId = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    let heardAt: number | undefined;
    phone.ws.on("message", (data) => {
      if (heardAt === undefined && JSON.parse(String(data)).type === "speech") heardAt = performance.now();
    });
    try {
      const opened = performance.now();
      const { turnId } = await engine.callerUtterance(callId, "I'd like to book a table");
      // More words every 200 ms, until the filler is heard or well past the time it is due.
      const sentAt: number[] = [];
      for (let k = 1; heardAt === undefined && k * 200 <= timeoutMs + 700; k++) {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, opened + k * 200 - performance.now())));
        if (heardAt !== undefined) break;
        sentAt.push(performance.now());
        expect(await engine.callerUtterance(callId, `and one more thing, number ${k}`)).toEqual({ turnId });
      }
      expect(await phone.next((f) => f.type === "speech", 5_000)).toEqual({ type: "speech", text: FILLER, final: false, turn_id: turnId });
      // Not before the timeout (timers never run early)...
      expect(heardAt! - opened).toBeGreaterThanOrEqual(timeoutMs - 50);
      // ...and while the caller was still adding words, the latest of them less than a timeout
      // before it: a clock restarted by those words would have been running still.
      const latest = sentAt.filter((at) => at < heardAt!).at(-1);
      expect(latest).toBeDefined();
      expect(heardAt! - latest!).toBeLessThan(timeoutMs);
      // One filler for the turn, however many words it grew by.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(phone.frames.filter((f) => f.type === "speech")).toHaveLength(1);
    } finally {
      engine.close();
      phone.close();
    }
  });

  it("stops with its engine: a turn still waiting when the engine closes hears no filler from it", async () => {
    const engine = new LiveCallEngine(service.core);
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    try {
      await engine.callerUtterance(callId, "Are you there?");
      engine.close();
      await new Promise((resolve) => setTimeout(resolve, TURN_TIMEOUT_MS + 500));
      expect(phone.frames.filter((f) => f.type === "speech")).toEqual([]);
    } finally {
      phone.close();
    }
  });

  it("logs a filler the carrier could not speak, with the call and the turn", async () => {
    const { core, logged } = coreWithCarrier(service.core, { speak: () => Promise.reject(new Error("line dropped")) });
    const engine = new LiveCallEngine(core);
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    try {
      const { turnId } = await engine.callerUtterance(callId, "Hello?");
      await expect.poll(() => logged, { timeout: 5_000 }).toEqual([["error", { err: expect.any(Error), call_id: callId, turn_id: turnId }, "filler failed"]]);
    } finally {
      engine.close();
    }
  });
});
