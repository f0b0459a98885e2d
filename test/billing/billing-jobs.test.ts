import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { BillingJobs } from "../../core/billing/billing-jobs.js";
import type { Core } from "../../core/context.js";
import { createLogger } from "../../core/logger.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { agentWithNumber } from "../support/telephony.js";
import { waitFor } from "../support/twilio/service.js";
import { manualClock, serviceForFile } from "./support.js";

// The billing timer itself (every other test calls runOnce by hand): it runs one pass at a time,
// keeps running after a pass fails, logs the failure, and stops on close. The pass is made to
// reach the hang-up port, by a call whose money has run out; the port is this test's, so the test
// decides when a pass ends and whether it fails.
// The service's own timer is set to an hour: only the jobs made here run.
const service = serviceForFile({ env: { BILLING_INTERVAL_MS: "3600000" } });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the billing timer", () => {
  it("runs one pass at a time, logs a failed pass and runs again, and stops on close", async () => {
    const clock = manualClock(service().core);
    // After the number, exactly the first minute of an outbound call.
    const account = await createAccount(service().core, undefined, { creditMicros: 1_150_000 + 15_000 });
    const api = new Api(service().baseUrl, account.apiKey);
    const { agentId } = await agentWithNumber(api);
    const call = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" })).body;
    expect(call.status).toBe("in-progress");
    clock.set(new Date(Date.parse(call.answered_at) + 61_000));

    // The service's core, seen with a 50 ms interval and a log this test reads.
    const log: Array<Record<string, any>> = [];
    const logger = createLogger(
      "error",
      new Writable({
        write: (chunk, _e, done) => (
          log.push(
            ...String(chunk)
              .trim()
              .split("\n")
              .map((l) => JSON.parse(l)),
          ),
          done()
        ),
      }),
    );
    const core = Object.create(service().core, { config: { value: { ...service().core.config, billingIntervalMs: 50 } }, logger: { value: logger } }) as Core;

    // The port is asked to end the call; the first time, it holds the pass until the test lets it go.
    const asked: Array<{ callId: string; at: string }> = [];
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const jobs = new BillingJobs(core, async (callId, at) => {
      asked.push({ callId, at: at.toISOString() });
      await held;
      throw new Error("the hang-up failed");
    });

    jobs.start();
    try {
      await waitFor(() => asked.length > 0, 10_000);
      expect(asked[0]).toEqual({ callId: call.call_id, at: new Date(Date.parse(call.answered_at) + 60_000).toISOString() });
      // Ten ticks go by while the pass is held: none starts another pass.
      await sleep(500);
      expect(asked).toHaveLength(1);

      letGo();
      await waitFor(() => log.some((l) => l.msg === "billing jobs failed"), 10_000);
      expect(log.find((l) => l.msg === "billing jobs failed")).toMatchObject({ level: 50, err: { message: "the hang-up failed" } });
      // The failed pass did not stop the timer: the call, still unpaid, is found again.
      await waitFor(() => asked.length >= 2, 10_000);
    } finally {
      await jobs.close();
    }
    const after = asked.length;
    await sleep(300);
    expect(asked).toHaveLength(after);
  });
});
