import { Writable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { renewLeases } from "../../core/billing/renewals.js";
import { createLogger } from "../../core/logger.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { freePort, TwilioStandIn } from "../../harness/twilio/stand-in.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithTwilioNumber } from "../support/twilio/service.js";
import { manualClock } from "./support.js";

// A number the lease job releases must be handed back to the carrier too, after the release is
// committed; if the carrier refuses, the number stays released here and the operator is told, in
// the log, which number to release by hand. Runs on CARRIER=twilio against the stand-in, with the
// service's log read back; the job is run by hand (its timer is set to an hour).
const FEE = 1_150_000;
const GRACE = 7 * 86_400_000;

let service: TestService;
let twilio: TwilioStandIn;
const logLines: Array<Record<string, any>> = [];

beforeAll(async () => {
  twilio = await TwilioStandIn.start();
  const port = await freePort();
  const logger = createLogger(
    "error",
    new Writable({
      write: (chunk, _e, done) => (
        logLines.push(
          ...String(chunk)
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l)),
        ),
        done()
      ),
    }),
  );
  service = await startTestService({ env: { ...twilio.env(`http://127.0.0.1:${port}`), PORT: String(port), BILLING_INTERVAL_MS: "3600000" }, logger });
});
afterAll(async () => {
  await service?.stop();
  await twilio?.close();
  twilio?.expectValid();
});
afterEach(() => {
  service.core.now = () => new Date();
});

/** A Twilio number whose renewal failed and whose grace period has just ended (the clock stands there). */
async function numberAtEndOfGrace() {
  const clock = manualClock(service.core, new Date("2027-03-01T09:00:00.000Z"));
  const account = await createAccount(service.core, undefined, { creditMicros: FEE });
  const { numberId, phoneNumber } = await agentWithTwilioNumber(new Api(service.baseUrl, account.apiKey));
  clock.set(new Date("2027-04-01T09:00:00.000Z"));
  await renewLeases(service.core);
  clock.advance(GRACE);
  return { numberId, phoneNumber };
}

const heldAtTwilio = (phoneNumber: string) => [...twilio.numbers.values()].some((n) => n.phoneNumber === phoneNumber);

describe("a number the lease job releases", () => {
  it("is deleted at Twilio", async () => {
    const { numberId, phoneNumber } = await numberAtEndOfGrace();
    expect(heldAtTwilio(phoneNumber)).toBe(true);
    expect((await renewLeases(service.core)).map((n) => n.numberId)).toContain(numberId);
    expect(heldAtTwilio(phoneNumber)).toBe(false);
  });

  it("stays released when Twilio refuses, and the log names the number to release there by hand", async () => {
    const { numberId, phoneNumber } = await numberAtEndOfGrace();
    twilio.fail("DeleteIncomingPhoneNumber", { status: 500, code: 20500, message: "Internal Server Error" });
    logLines.length = 0;
    expect((await renewLeases(service.core)).map((n) => n.numberId)).toContain(numberId);
    expect(heldAtTwilio(phoneNumber)).toBe(true);
    const [line] = logLines.filter((l) => l.number_id === numberId);
    expect(line).toMatchObject({
      level: 50,
      msg: "a released number could not be handed back to the carrier; release it there by hand",
      number_id: numberId,
      phone_number: phoneNumber,
      err: expect.objectContaining({ message: expect.any(String) }),
    });
  });
});
