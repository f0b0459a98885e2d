import { createServer } from "node:http";
import twilio from "twilio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { TwilioOpenApi, twilioOpenApiPath } from "../../harness/twilio/openapi.js";
import { RelayLeg, readRelayTwiml } from "../../harness/twilio/relay-leg.js";
import { twilioSignature } from "../../harness/twilio/signing.js";
import { TwilioStandIn } from "../../harness/twilio/stand-in.js";

// The stand-in is only as good as its checks: these show that it tells a request Twilio would
// take from one it would not, and that it signs as Twilio does.
const api = new TwilioOpenApi();
const account = "AC" + "a".repeat(32);
const callsPath = `/2010-04-01/Accounts/${account}/Calls.json`;
const validCall = {
  To: "+14155550142",
  From: "+14155550101",
  Twiml: '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>',
  StatusCallbackEvent: ["ringing", "completed"],
};

describe("the stand-in's check against Twilio's OpenAPI", () => {
  it("finds the document where the project keeps it, and fails clearly when it is missing", () => {
    expect(twilioOpenApiPath()).toMatch(/twilio_api_v2010\.json$/);
    expect(() => twilioOpenApiPath(["/nowhere/twilio_api_v2010.json"])).toThrow(
      /Twilio's OpenAPI document \(twilio_api_v2010\.json\) was not found; looked at: \/nowhere/,
    );
  });

  it("accepts a request Twilio documents", () => {
    expect(api.check({ method: "POST", path: callsPath, query: {}, form: validCall })).toMatchObject({
      operationId: "CreateCall",
      params: { AccountSid: account },
    });
  });

  it.each([
    ["a missing required field", { method: "POST", path: callsPath, query: {}, form: { From: validCall.From } }, /\(To\)/],
    [
      "an unknown field",
      { method: "POST", path: callsPath, query: {}, form: { ...validCall, CallerName: "x" } },
      /form field CallerName is not in the document/,
    ],
    ["a To that is no endpoint", { method: "POST", path: callsPath, query: {}, form: { ...validCall, To: "415-555-0142" } }, /To must match format "endpoint"/],
    [
      "a method outside the enum",
      { method: "POST", path: callsPath, query: {}, form: { ...validCall, StatusCallbackMethod: "PUT" } },
      /StatusCallbackMethod must be equal to one of the allowed values/,
    ],
    ["an integer that is not one", { method: "POST", path: callsPath, query: {}, form: { ...validCall, Timeout: "soon" } }, /Timeout must be integer/],
    ["TwiML that is not TwiML", { method: "POST", path: callsPath, query: {}, form: { ...validCall, Twiml: "<Hangup/>" } }, /Twiml must match format "twiml"/],
    [
      "a sid of the wrong shape",
      { method: "POST", path: `/2010-04-01/Accounts/${account}/Calls/CA123.json`, query: {}, form: { Status: "completed" } },
      /path\/Sid must match pattern/,
    ],
    [
      "an unknown query parameter",
      { method: "GET", path: `/2010-04-01/Accounts/${account}/IncomingPhoneNumbers.json`, query: { Number: "+1" }, form: {} },
      /query parameter Number is not in the document/,
    ],
    [
      "a path that is no operation",
      { method: "POST", path: `/2010-04-01/Accounts/${account}/Phones.json`, query: {}, form: {} },
      /is not an operation of Twilio's API/,
    ],
    [
      "a text with a field Messages create does not take",
      { method: "POST", path: `/2010-04-01/Accounts/${account}/Messages.json`, query: {}, form: { To: "+14155550142", Body: "hi", Text: "hi" } },
      /form field Text is not in the document/,
    ],
    [
      "a text with no To",
      { method: "POST", path: `/2010-04-01/Accounts/${account}/Messages.json`, query: {}, form: { From: "+14155550101", Body: "hi" } },
      /\(To\)/,
    ],
  ])("refuses %s", (_label, request, problem) => {
    const result = api.check(request);
    expect("problems" in result && result.problems.join("; ")).toMatch(problem);
  });
});

describe("the stand-in", () => {
  let standIn: TwilioStandIn;
  beforeAll(async () => {
    standIn = await TwilioStandIn.start();
  });
  afterAll(() => standIn?.close());

  it("answers an invalid request 400 with Twilio's error shape and records it, so the test fails", async () => {
    const res = await fetch(`${standIn.url}/2010-04-01/Accounts/${standIn.accountSid}/Calls.json`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`${standIn.accountSid}:${standIn.authToken}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "From=%2B14155550101",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 20001, status: 400, more_info: "https://www.twilio.com/docs/errors/20001" });
    expect(() => standIn.expectValid()).toThrow(/do not match its OpenAPI/);
    // Handed once to the hook that fails the test that sent it (test/support/twilio/fail-fast.ts).
    expect(standIn.takeNewViolations()).toEqual([expect.stringMatching(/^POST \/2010-04-01\/Accounts\/AC\w+\/Calls\.json: .*\(To\)/)]);
    expect(standIn.takeNewViolations()).toEqual([]);
    standIn.violations.length = 0;
  });

  it("sends a text through the SDK (Messages create), and its status callbacks signed, with ErrorCode only when it failed", async () => {
    const number = standIn.ownNumber("+14155550101");
    const client = twilio(standIn.accountSid, standIn.authToken);
    client.api.baseUrl = standIn.url;
    const received: Array<{ url: string; form: URLSearchParams; signature: string | null }> = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ url: req.url!, form: new URLSearchParams(body), signature: req.headers["x-twilio-signature"] as string });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const callback = `http://127.0.0.1:${(server.address() as { port: number }).port}/sms-status?message_id=msg_1`;
      const sent = await client.messages.create({ to: "+14155550142", from: number.phoneNumber, body: "hi", statusCallback: callback });
      expect(sent).toMatchObject({ status: "queued", direction: "outbound-api", body: "hi", to: "+14155550142" });
      expect(sent.sid).toMatch(/^SM[0-9a-f]{32}$/);
      await standIn.messageStatus(sent.sid, "sent");
      await standIn.messageStatus(sent.sid, "undelivered", { errorCode: 30005 });
      expect(received.map((r) => [r.form.get("MessageStatus"), r.form.get("MessageSid"), r.form.get("ErrorCode")])).toEqual([
        ["sent", sent.sid, null],
        ["undelivered", sent.sid, "30005"],
      ]);
      for (const r of received) {
        expect(twilio.validateRequest(standIn.authToken, r.signature!, callback, Object.fromEntries(r.form))).toBe(true);
      }
      standIn.optedOut.add(`${number.phoneNumber}|+14155550143`);
      await expect(client.messages.create({ to: "+14155550143", from: number.phoneNumber, body: "hi" })).rejects.toMatchObject({ status: 400, code: 21610 });
      expect(() => standIn.expectValid()).not.toThrow();
    } finally {
      server.close();
    }
  });

  it("refuses the SDK with the wrong credentials as Twilio does (401, 20003)", async () => {
    const client = twilio(standIn.accountSid, "0".repeat(32));
    client.api.baseUrl = standIn.url;
    await expect(client.api.v2010.accounts(standIn.accountSid).fetch()).rejects.toMatchObject({ status: 401, code: 20003 });
  });

  it("signs webhooks exactly as the SDK's own check expects, URL and parameters included", () => {
    const url = "https://line.example.com/twilio/sms?x=1";
    const params = { MessageSid: "SM" + "b".repeat(32), Body: "héllo & bye", From: "+14155550166" };
    const signature = twilioSignature(standIn.authToken, url, params);
    expect(twilio.validateRequest(standIn.authToken, signature, url, params)).toBe(true);
    expect(twilio.validateRequest(standIn.authToken, signature, url, { ...params, Body: "changed" })).toBe(false);
  });
});

describe("the stand-in's ConversationRelay leg", () => {
  it("plays sendDigits of 0-9 * # w, and answers any other with an error frame, recording it so the test fails", async () => {
    const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
    const received: any[] = [];
    server.on("connection", (ws) => {
      ws.on("message", (data) => received.push(JSON.parse(String(data))));
      ws.send(JSON.stringify({ type: "sendDigits", digits: "1w*#" }));
      ws.send(JSON.stringify({ type: "sendDigits", digits: "12x" }));
      ws.send(JSON.stringify({ type: "sendDigits" }));
    });
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as { port: number };
    const leg = await RelayLeg.connect(`ws://127.0.0.1:${port}/relay`, "t".repeat(32));
    try {
      expect(await leg.digitsSent(0)).toBe("1w*#");
      await new Promise((r) => setTimeout(r, 100));
      expect(leg.digits).toEqual(["1w*#"]);
      expect(leg.refusedDigits).toEqual(["12x", undefined]);
      expect(received.filter((f) => f.type === "error")).toHaveLength(2);
    } finally {
      leg.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("reads welcomeGreeting from the TwiML the SDK builds, unescaped", () => {
    const response = new twilio.twiml.VoiceResponse();
    response.connect().conversationRelay({ url: "wss://example.com/relay", welcomeGreeting: 'Hi & welcome to "Acme" <3' });
    expect(readRelayTwiml(response.toString())!.attributes.welcomeGreeting).toBe('Hi & welcome to "Acme" <3');
  });
});
