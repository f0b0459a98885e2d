import { expect } from "vitest";
import type { Logger } from "../../../core/logger.js";
import type { Api } from "../../../harness/api.js";
import { freePort, type RelayLeg, TwilioStandIn } from "../../../harness/twilio/stand-in.js";
import { startTestService, type TestService } from "../service.js";

export interface TwilioTestService {
  service: TestService;
  twilio: TwilioStandIn;
  /** Stops both, and fails if any request the service sent Twilio broke Twilio's OpenAPI. */
  stop(): Promise<void>;
}

/** The whole service in this process on CARRIER=twilio, pointed at a fresh stand-in. */
export async function startTwilioService(
  env: Record<string, string> = {},
  options: { apiKey?: boolean; twilio?: TwilioStandIn; databaseUrl?: string; logger?: Logger } = {},
): Promise<TwilioTestService> {
  const twilio = options.twilio ?? (await TwilioStandIn.start(options));
  const port = await freePort();
  const service = await startTestService({
    env: { ...twilio.env(`http://127.0.0.1:${port}`), PORT: String(port), SIGNUP_CREDIT_USD: "5.00", TURN_TIMEOUT_MS: "60000", ...env },
    ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return {
    service,
    twilio,
    async stop() {
      await service.stop();
      await twilio.close();
      twilio.expectValid();
    },
  };
}

/** An agent with a number bought at the stand-in. */
export async function agentWithTwilioNumber(api: Api, agent: Record<string, unknown> = {}) {
  const created = await api.post("/v1/agents", { name: "Twilio agent", ...agent });
  const number = await api.post("/v1/numbers", { agent_id: created.body.agent_id });
  expect(number.status).toBe(201);
  return { agentId: created.body.agent_id as string, numberId: number.body.number_id as string, phoneNumber: number.body.phone_number as string };
}

/** An outbound call placed through the API and answered at the stand-in: its relay socket is open. */
export async function connectedTwilioCall(
  api: Api,
  twilio: TwilioStandIn,
  agentId: string,
  to = "+14155550142",
): Promise<{ callId: string; callSid: string; leg: RelayLeg }> {
  const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: to });
  expect(placed.status).toBe(201);
  const callSid = twilio.lastCall().sid;
  await twilio.ring(callSid);
  const leg = await twilio.answer(callSid);
  await waitFor(async () => (await api.get(`/v1/calls/${placed.body.call_id}`)).body.status === "in-progress");
  return { callId: placed.body.call_id as string, callSid, leg };
}

/** Polls until check passes (generous: the machine is shared). */
export async function waitFor(check: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
