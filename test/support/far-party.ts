import type { Api } from "../../harness/api.js";
import { freePort, type RelayLeg, TwilioStandIn } from "../../harness/twilio/stand-in.js";
import { Softphone } from "./softphone.js";

/**
 * The other end of a call, whichever carrier the service runs on, so one scenario runs on both:
 * the sandbox's softphone, or a phone behind the Twilio stand-in (ConversationRelay socket).
 */
export interface PhoneLine {
  /** The caller finishes an utterance; resolves with the turn it opened. */
  say(text: string): Promise<string>;
  /** The caller presses a key; resolves with the turn it opened. */
  pressKey(digit: string): Promise<string>;
  /** The caller talks over the agent. */
  interrupt(): void;
  /** The `index`-th line the caller heard the agent say (0-based). */
  heard(index: number): Promise<string>;
  /** The caller hangs up. */
  hangUp(): Promise<void>;
  /** Resolves once the agent's side has ended the call and the line has dropped. */
  droppedByAgent(): Promise<void>;
}

export interface FarParty {
  carrier: "sandbox" | "twilio";
  /** What `npm start` needs beside the common settings. */
  env(): Promise<Record<string, string>>;
  /** Picks up the outbound call the service just placed. */
  answer(api: Api, callId: string): Promise<PhoneLine>;
  /** Someone calls the number; the agent answers. */
  callIn(api: Api, call: { from: string; to: string }): Promise<{ callId: string; line: PhoneLine }>;
  /** Someone texts the number. */
  textIn(api: Api, text: { from: string; to: string; text: string }): Promise<void>;
  close(): Promise<void>;
}

class SandboxLine implements PhoneLine {
  constructor(private readonly phone: Softphone) {}
  say(text: string) {
    return this.phone.say(text);
  }
  async pressKey(digit: string) {
    const from = this.phone.frames.length;
    this.phone.send({ type: "dtmf", digits: digit });
    return (await this.phone.next((f) => f.type === "said", 5_000, from)).turn_id as string;
  }
  interrupt() {
    this.phone.send({ type: "interrupt" });
  }
  async heard(index: number) {
    await this.phone.next(() => this.phone.frames.filter((f) => f.type === "speech").length > index);
    return this.phone.frames.filter((f) => f.type === "speech")[index]!.text as string;
  }
  async hangUp() {
    this.phone.send({ type: "hangup" });
    await this.phone.closed;
  }
  async droppedByAgent() {
    await this.phone.next((f) => f.type === "status" && f.status === "completed");
    await this.phone.closed;
  }
}

export const sandboxFarParty = (): FarParty => ({
  carrier: "sandbox",
  env: async () => ({}),
  answer: async (api, callId) => new SandboxLine(await connected(api, callId)),
  async callIn(api, call) {
    const { body, status } = await api.post("/v1/sandbox/inbound/calls", { to_number: call.to, from_number: call.from });
    if (status !== 201) throw new Error(`sandbox inbound call answered ${status}`);
    return { callId: body.call_id, line: new SandboxLine(await connected(api, body.call_id)) };
  },
  async textIn(api, text) {
    const { status } = await api.post("/v1/sandbox/inbound/sms", { to_number: text.to, from_number: text.from, text: text.text });
    if (status !== 201) throw new Error(`sandbox inbound text answered ${status}`);
  },
  close: async () => {},
});

async function connected(api: Api, callId: string): Promise<Softphone> {
  const phone = await Softphone.connect(api.baseUrl, callId, api.key ?? null);
  await phone.next((f) => f.type === "status" && f.status === "in-progress");
  return phone;
}

class TwilioLine implements PhoneLine {
  private readonly seen = new Set<string>();
  constructor(
    private readonly api: Api,
    private readonly twilio: TwilioStandIn,
    private readonly callId: string,
    private readonly callSid: string,
    private readonly leg: RelayLeg,
  ) {}
  say(text: string) {
    this.leg.say(text);
    return this.turnFor(text, "speech");
  }
  pressKey(digit: string) {
    this.leg.pressKey(digit);
    return this.turnFor(digit, "dtmf");
  }
  interrupt() {
    this.leg.interrupt();
  }
  heard(index: number) {
    return this.leg.line(index);
  }
  async hangUp() {
    await this.twilio.hangUp(this.callSid);
  }
  async droppedByAgent() {
    await this.leg.ended();
    await this.leg.closed;
    await this.twilio.settled();
  }
  /** The turn a caller's input opened, as the agent hears of it (its call.utterance). */
  private async turnFor(text: string, input: string): Promise<string> {
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const { body } = await this.api.get("/v1/events/peek", { query: { limit: 100 } });
      const event = (body.data as any[]).find(
        (e) =>
          e.event_type === "call.utterance" && e.call_id === this.callId && e.payload.text === text && e.payload.input === input && !this.seen.has(e.turn_id),
      );
      if (event) {
        this.seen.add(event.turn_id);
        return event.turn_id as string;
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no call.utterance for ${JSON.stringify(text)} on ${this.callId}`);
  }
}

/** A far party behind the Twilio stand-in: the service runs with CARRIER=twilio pointed at it. */
export async function twilioFarParty(): Promise<FarParty & { twilio: TwilioStandIn }> {
  const twilio = await TwilioStandIn.start();
  return {
    carrier: "twilio",
    twilio,
    async env() {
      const port = await freePort();
      return { ...twilio.env(`http://127.0.0.1:${port}`), PORT: String(port) };
    },
    async answer(api, callId) {
      const call = twilio.lastCall();
      await twilio.ring(call.sid);
      const leg = await twilio.answer(call.sid);
      return new TwilioLine(api, twilio, callId, call.sid, leg);
    },
    async callIn(api, from) {
      const { call, leg } = await twilio.callIn(from);
      if (!leg) throw new Error(`the service did not connect the call: ${call.twiml}`);
      const callId = /name="call_id" value="([^"]+)"/.exec(call.twiml!)![1]!;
      return { callId, line: new TwilioLine(api, twilio, callId, call.sid, leg) };
    },
    async textIn(_api, text) {
      const answer = await twilio.textIn({ from: text.from, to: text.to, body: text.text });
      if (answer.status !== 200) throw new Error(`messaging webhook answered ${answer.status}: ${answer.text}`);
    },
    async close() {
      await twilio.close();
      twilio.expectValid();
    },
  };
}
