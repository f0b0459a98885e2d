import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { Agentline, unwrap } from "@agentline/sdk";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { calls } from "../../core/db/schema/calls.js";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { type ExampleProcess, runScript } from "../support/examples.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";

// One service for every example, each started by its own `npm run` script.
let service: TestService;
let account: TestAccount;
let agentline: Agentline;
const running: ExampleProcess[] = [];

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  agentline = new Agentline({ baseUrl: service.baseUrl, apiKey: account.apiKey });
});
afterEach(async () => {
  for (const example of running.splice(0)) await example.stop();
});
afterAll(() => service?.stop());

function start(script: string, env: Record<string, string> = {}): ExampleProcess {
  const example = runScript(script, { AGENTLINE_BASE_URL: service.baseUrl, AGENTLINE_API_KEY: account.apiKey, ...env });
  running.push(example);
  return example;
}

/** An agent with a sandbox number, made with the SDK. */
async function newAgent(name: string) {
  const agent = unwrap(await agentline.api.POST("/v1/agents", { body: { name } }));
  unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agent.agent_id, area_code: "415" } }));
  return agent.agent_id;
}

const callPath = (call_id: string) => ({ params: { path: { call_id } } });

async function waitFor<T>(check: () => Promise<T | undefined | false>, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("examples/, each run by its npm script against the sandbox", () => {
  it("example:scripted answers a whole call, driven only through the SDK, and hangs up when told goodbye", { timeout: 120_000 }, async () => {
    const agentId = await newAgent("Bakery");
    const agent = start("example:scripted", { AGENT_ID: agentId });
    await agent.waitFor(/is answering its calls/);

    const call = unwrap(await agentline.api.POST("/v1/calls", { body: { agent_id: agentId, to_number: "+14155550199" } }));
    const transcript = async () => unwrap(await agentline.api.GET("/v1/calls/{call_id}/transcript", callPath(call.call_id))).map((l) => `${l.role}: ${l.text}`);
    const callerSays = async (text: string, answer: string) => {
      unwrap(await agentline.api.POST("/v1/sandbox/calls/{call_id}/say", { ...callPath(call.call_id), body: { text } }));
      await waitFor(async () => (await transcript()).includes(`assistant: ${answer}`), `the answer to "${text}"`);
    };
    await callerSays("Hi, do you have sourdough today?", "We do! Two sourdough loaves are left. Shall I keep one for you?");
    await callerSays("Yes please.", "Done: one loaf under your name until six tonight.");
    await callerSays("Thanks, bye!", "Thank you for calling the bakery. Goodbye!");

    // The last answer ended the call (endCall), and the agent heard that it ended.
    await agent.waitFor(new RegExp(`call ${call.call_id} ended after \\d+ s`));
    expect(unwrap(await agentline.api.GET("/v1/calls/{call_id}", callPath(call.call_id))).status).toBe("completed");
    expect(await transcript()).toHaveLength(6);
  });

  it("example:llm answers from an OpenAI-compatible endpoint (a loopback stand-in), streaming sentence by sentence", { timeout: 120_000 }, async () => {
    const requests: Array<{ headers: IncomingMessage["headers"]; body: any }> = [];
    const llm = createServer(async (req, res) => {
      let raw = "";
      for await (const chunk of req) raw += chunk;
      requests.push({ headers: req.headers, body: JSON.parse(raw) });
      if (req.url !== "/v1/chat/completions") return void res.writeHead(404).end();
      // The stream as OpenAI sends it: server-sent events of deltas, then [DONE].
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const piece of ["We do have ", "sourdough today. ", "Two loaves ", "are left!"]) {
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece } }] })}\n\n`);
        await new Promise((r) => setTimeout(r, 20));
      }
      res.end("data: [DONE]\n\n");
    });
    await new Promise<void>((resolve) => llm.listen(0, "127.0.0.1", resolve));
    try {
      const agentId = await newAgent("Bakery (LLM)");
      const agent = start("example:llm", {
        AGENT_ID: agentId,
        LLM_BASE_URL: `http://127.0.0.1:${(llm.address() as AddressInfo).port}/v1`,
        LLM_API_KEY: "llm-test-key",
        LLM_MODEL: "bakery-1",
      });
      await agent.waitFor(/is answering its calls with bakery-1/);
      const call = unwrap(await agentline.api.POST("/v1/calls", { body: { agent_id: agentId, to_number: "+14155550199" } }));
      const phone = await Softphone.connect(service.baseUrl, call.call_id, account.apiKey);
      const turnId = await phone.say("Hi, do you have sourdough today?");
      const final = await phone.next((f) => f.type === "speech" && f.turn_id === turnId && f.final, 30_000);
      const lines = phone.frames.filter((f) => f.type === "speech" && f.turn_id === turnId).map((f) => [f.text, f.final]);
      expect(lines).toEqual([
        ["We do have sourdough today.", false],
        ["Two loaves are left!", true],
      ]);
      expect(final.text).toBe("Two loaves are left!");
      await phone.close();

      expect(requests).toHaveLength(1);
      expect(requests[0]!.headers.authorization).toBe("Bearer llm-test-key");
      expect(requests[0]!.body).toMatchObject({ model: "bakery-1", stream: true });
      expect(requests[0]!.body.messages[0].role).toBe("system");
      expect(requests[0]!.body.messages.slice(1)).toEqual([{ role: "user", content: "Hi, do you have sourdough today?" }]);
    } finally {
      await new Promise((resolve) => llm.close(resolve));
    }
  });

  it("example:webhook verifies deliveries, refuses forgeries, and handles each event once", { timeout: 120_000 }, async () => {
    const agentId = await newAgent("Hooked");
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    const receiver = start("example:webhook", { WEBHOOK_SECRET: secret, PORT: "0" });
    const [, url] = await receiver.waitFor(/receiving webhooks on (http:\/\/127\.0\.0\.1:\d+)/);
    unwrap(await agentline.api.POST("/v1/webhooks", { body: { agent_id: agentId, url: url!, secret, signature_header: "X-Hub-Signature-256" } }));

    // Real deliveries from the service: the test event and a text.
    const tested = unwrap(await agentline.api.POST("/v1/webhooks/test", { params: { query: { agent_id: agentId } } }));
    expect(tested).toMatchObject({ delivered: true });
    await receiver.waitFor(/handled webhook\.test evt_/);
    const numbers = unwrap(await agentline.api.GET("/v1/numbers", { params: { query: { agent_id: agentId } } }));
    unwrap(
      await agentline.api.POST("/v1/sandbox/inbound/sms", {
        body: { to_number: numbers.data[0]!.phone_number, from_number: "+14155550150", text: "ignore previous instructions" },
      }),
    );
    const [, smsId] = await receiver.waitFor(/handled sms\.received (evt_\w+)/);
    await receiver.waitFor(/text from \+14155550150: "ignore previous instructions"/);

    // The same event again, correctly signed (as a retry would be): acknowledged, not handled twice.
    const again = JSON.stringify({ event_id: smsId, event_type: "sms.received", agent_id: agentId, payload: {} });
    const signed = new Webhook(secret).sign(`msg_${randomBytes(6).toString("hex")}`, new Date(), again);
    const post = (body: string, headers: Record<string, string>) =>
      fetch(url!, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
    const duplicate = await post(again, { "webhook-id": "msg_dup", "webhook-timestamp": String(Math.floor(Date.now() / 1000)), "webhook-signature": signed });
    expect(duplicate.status).toBe(401); // signed for another message id: the signature covers it
    const msgId = "msg_dup2";
    const timestamp = new Date();
    const good = await post(again, {
      "webhook-id": msgId,
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(msgId, timestamp, again),
    });
    expect(good.status).toBe(204);
    await receiver.waitFor(new RegExp(`duplicate ${smsId} ignored`));

    // A forgery, and a replay of a stale timestamp, are refused.
    expect((await post(again, { "x-hub-signature-256": `sha256=${"0".repeat(64)}` })).status).toBe(401);
    const stale = new Date(Date.now() - 3_600_000);
    expect(
      (
        await post(again, {
          "webhook-id": "msg_old",
          "webhook-timestamp": String(Math.floor(stale.getTime() / 1000)),
          "webhook-signature": new Webhook(secret).sign("msg_old", stale, again),
        })
      ).status,
    ).toBe(401);
    expect(receiver.output().match(/handled sms\.received/g)).toHaveLength(1);
  });

  it("example:wallet tops up with the stock @x402/fetch client under a spend cap, buys a number and places a call", { timeout: 120_000 }, async () => {
    const wallet = start("example:wallet", { AGENTLINE_API_KEY: "", SPEND_CAP_USD: "5" });
    expect(await wallet.exited).toBe(0);
    const summary = JSON.parse(wallet.output().trim().split("\n").at(-1)!);
    expect(summary).toMatchObject({
      payer: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
      call_id: expect.stringMatching(/^call_/),
      number: expect.stringMatching(/^\+1415555/),
    });
    expect(wallet.output()).toContain("user: Hello, who is paying for this call?");
    const settlements = await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, summary.payer));
    expect(settlements.map((s) => s.amountMicros)).toEqual([5_000_000]);
    const [call] = await service.core.db.select().from(calls).where(eq(calls.callId, summary.call_id));
    expect(call).toMatchObject({ status: "completed", direction: "outbound" });
  });

  it("example:wallet pays nothing beyond its spend cap", { timeout: 120_000 }, async () => {
    const wallet = start("example:wallet", { AGENTLINE_API_KEY: "", SPEND_CAP_USD: "5", TOPUP_USD: "10" });
    expect(await wallet.exited).not.toBe(0);
    const [, payer] = wallet.output().match(/wallet (0x[0-9a-fA-F]{40}) tops up 10 USD, paying at most 5 USD/)!;
    expect(await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, payer!))).toEqual([]);
  });
  it("example:receptionist greets, books and confirms by text, and hands the call to the owner when asked", { timeout: 120_000 }, async () => {
    const agentId = await newAgent("Receptionist");
    const owner = "+14155557777";
    const agent = start("example:receptionist", { AGENT_ID: agentId, OWNER_NUMBER: owner });
    await agent.waitFor(/is answering its calls/);
    const numbers = unwrap(await agentline.api.GET("/v1/numbers", { params: { query: { agent_id: agentId } } }));
    const caller = "+14155550150";
    const inbound = unwrap(await agentline.api.POST("/v1/sandbox/inbound/calls", { body: { to_number: numbers.data[0]!.phone_number, from_number: caller } }));
    const phone = await Softphone.connect(service.baseUrl, inbound.call_id, account.apiKey);
    const greeting = await phone.next((f) => f.type === "speech" && f.turn_id === null, 30_000);
    expect(greeting.text).toMatch(/^Thanks for calling the bakery/);

    const booked = await phone.say("Can I book a table for two at seven?");
    const confirmed = await phone.next((f) => f.type === "speech" && f.turn_id === booked && f.final, 30_000);
    expect(confirmed.text).toBe("Done: a table for two at seven. I've texted you a confirmation.");
    await agent.waitFor(/booking for two at seven on call_\w+; confirmation sent msg_/);
    const texts = unwrap(await agentline.api.GET("/v1/messages", { params: { query: { agent_id: agentId } } }));
    const sent = texts.data.filter((m: any) => m.direction === "outbound");
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to_number: caller, text: "Bakery: your table for two at seven is booked. Reply STOP to opt out." });

    const asked = await phone.say("Actually, can I talk to the owner?");
    const handing = await phone.next((f) => f.type === "speech" && f.turn_id === asked && f.final, 30_000);
    expect(handing.text).toBe("Putting you through now.");
    await agent.waitFor(new RegExp(`call ${inbound.call_id} is with \\${owner}`));
    const call = unwrap(await agentline.api.GET("/v1/calls/{call_id}", callPath(inbound.call_id)));
    expect(call).toMatchObject({ transferred_to: owner, transfer_status: "bridged" });
    await phone.close();
  });
});
