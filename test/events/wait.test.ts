import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { farPartySays } from "../../core/carrier/sandbox/far-party.js";
import { waitForEvents } from "../../core/events/wait.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";

let service: TestService;
let account: TestAccount;
let agentId: string;
let callId: string;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  const api = new Api(service.baseUrl, account.apiKey);
  ({ agentId } = await agentWithNumber(api));
  callId = await answeredCall(api, agentId);
});
afterAll(() => service?.stop());

const wait = (timeoutMs: number, signal?: AbortSignal) =>
  waitForEvents(service.core, account.accountId, { agentId, eventTypes: ["call.utterance"] }, { limit: 10, timeoutMs, signal });
const say = (text: string) => farPartySays(service.core, account.accountId, callId, text);

describe("waitForEvents, the mailbox long-poll", () => {
  it("returns pending events at once, consuming them", async () => {
    await say("one");
    const first = await wait(10_000);
    expect(first.data.map((e) => e.payload.text)).toEqual(["one"]);
    expect(first.timed_out).toBe(false);
    expect((await wait(0)).data).toEqual([]);
  });

  it("wakes when an event arrives, well before its timeout", async () => {
    const started = Date.now();
    const waiting = wait(30_000);
    setTimeout(() => void say("two"), 200);
    const batch = await waiting;
    expect(batch.data.map((e) => e.payload.text)).toEqual(["two"]);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("gives each event to one waiter only", async () => {
    const waiters = [wait(2_000), wait(2_000)];
    setTimeout(() => void say("three"), 200);
    const batches = await Promise.all(waiters);
    expect(batches.flatMap((b) => b.data.map((e) => e.payload.text))).toEqual(["three"]);
    expect(batches.filter((b) => b.timed_out)).toHaveLength(1);
  });

  it("times out empty, and stops early when aborted", async () => {
    const quiet = await wait(300);
    expect(quiet).toMatchObject({ data: [], timed_out: true, has_more: false });
    const controller = new AbortController();
    const started = Date.now();
    const waiting = wait(30_000, controller.signal);
    setTimeout(() => controller.abort(), 200);
    expect((await waiting).data).toEqual([]);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("refuses another account's agent or call before waiting", async () => {
    const stranger = await createAccount(service.core);
    await expect(waitForEvents(service.core, stranger.accountId, { agentId }, { limit: 1, timeoutMs: 30_000 })).rejects.toMatchObject({ code: "not_found" });
    await expect(waitForEvents(service.core, stranger.accountId, { callId }, { limit: 1, timeoutMs: 30_000 })).rejects.toMatchObject({ code: "not_found" });
  });
});
