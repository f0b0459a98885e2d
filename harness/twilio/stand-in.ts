import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { attributesOf, RelayLeg, readRelayTwiml, unescapeXml } from "./relay-leg.js";
import type { StandInMessage } from "./resources.js";
import { rfc2822 } from "./resources.js";
import { type StandInCall, TwilioRest } from "./rest-server.js";
import { twilioSid, twilioSignature } from "./signing.js";

export { RelayLeg } from "./relay-leg.js";
export type { StandInCall } from "./rest-server.js";

/** Twilio's opt-out and opt-in keywords (its default Advanced Opt-Out handling for long codes). */
const STOP_WORDS = new Set(["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"]);
const START_WORDS = new Set(["START", "YES", "UNSTOP"]);

/** A free loopback port (BASE_URL must be known before the service starts, for Twilio's URLs). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// Which status callback event announces each status (terminal ones come with `completed`).
const EVENT_OF: Record<string, string> = { initiated: "initiated", ringing: "ringing", "in-progress": "answered" };
const ENDED = new Set(["completed", "busy", "no-answer", "failed", "canceled"]);

/** What the service answered to a request the stand-in made (a webhook). */
export interface WebhookAnswer {
  status: number;
  text: string;
}

/**
 * A `<Dial>` the stand-in followed, as Twilio would (https://www.twilio.com/docs/voice/twiml/dial):
 * the person dialled, how it went (by the number's last four digits, as the sandbox: 0001 busy,
 * 0002 no answer, 0003 failed, else answered), the Dial's attributes, and what the `<Number url>`
 * TwiML `<Say>`s to the person before the bridge (a warm transfer's whisper).
 */
export interface StandInDial {
  callSid: string;
  to: string;
  outcome: "answered" | "busy" | "no-answer" | "failed";
  dial: Record<string, string>;
  number: Record<string, string>;
  /** The `<Say>`s of the `<Number url>` answer, in order; null with no url. */
  whisper: string[] | null;
  /** The child leg (the person's call). */
  childSid: string;
  answeredAt: Date | null;
}

function dialOutcome(to: string): StandInDial["outcome"] {
  switch (to.slice(-4)) {
    case "0001":
      return "busy";
    case "0002":
      return "no-answer";
    case "0003":
      return "failed";
    default:
      return "answered";
  }
}

/**
 * A loopback Twilio for tests: the REST API (TwilioRest), plus the telephone network behind it.
 * Tests drive the far party here: ring and answer an outbound call (status callbacks, then the
 * ConversationRelay socket and its `setup`), call in to a number (the voice webhook), text a
 * number (the messaging webhook), hang up (the socket closes and the `completed` callback
 * carries `CallDuration`). Every webhook is signed as Twilio signs it. The service's `end`
 * frame and its `Calls` update end the call as Twilio would.
 */
export class TwilioStandIn extends TwilioRest {
  readonly legs = new Map<string, RelayLeg>();
  /** Every `<Dial>` followed, in order. */
  readonly dials: StandInDial[] = [];
  /** What each `<Connect action>` request carried (the session's end: `HandoffData`, `SessionStatus`). */
  readonly connectActions: Array<{ callSid: string; params: Record<string, string>; answer: WebhookAnswer }> = [];
  /** Calls bridged to a dialled person, by the parent's sid: the Dial whose action reports the end. */
  private readonly bridged = new Map<string, StandInDial>();
  private readonly pending = new Set<Promise<unknown>>();

  static async start(options: { apiKey?: boolean } = {}): Promise<TwilioStandIn> {
    const apiKey = options.apiKey ? { sid: twilioSid("SK"), secret: randomBytes(16).toString("hex") } : undefined;
    const standIn = new TwilioStandIn(twilioSid("AC"), randomBytes(16).toString("hex"), apiKey);
    await standIn.listen();
    return standIn;
  }

  /** The environment that puts the service on this stand-in (as docs/operating.md's "Going live with Twilio" says, but local). */
  env(baseUrl: string): Record<string, string> {
    return {
      CARRIER: "twilio",
      TWILIO_ACCOUNT_SID: this.accountSid,
      TWILIO_AUTH_TOKEN: this.authToken,
      TWILIO_API_URL: this.url,
      BASE_URL: baseUrl,
      ...(this.apiKey ? { TWILIO_API_KEY_SID: this.apiKey.sid, TWILIO_API_KEY_SECRET: this.apiKey.secret } : {}),
    };
  }

  /** The outbound call the service placed last. */
  lastCall(): StandInCall {
    const outbound = [...this.calls.values()].filter((c) => c.direction === "outbound-api");
    if (outbound.length === 0) throw new Error("the service placed no call at the stand-in");
    return outbound.at(-1)!;
  }

  /** The far phone rings: `initiated`, then `ringing`. */
  async ring(callSid: string): Promise<void> {
    const call = this.call(callSid);
    await this.report(call, "initiated");
    await this.report(call, "ringing");
  }

  /**
   * The far party picks up: the `answered` callback, then Twilio runs the TwiML it was given and
   * opens the ConversationRelay socket with `setup` (`socketFirst`: the socket before the callback,
   * as happens when Twilio's callback is slow).
   */
  async answer(callSid: string, options: { socketFirst?: boolean } = {}): Promise<RelayLeg> {
    const call = this.call(callSid);
    call.status = "in-progress";
    call.answeredAt = new Date();
    if (!options.socketFirst) await this.report(call, "in-progress");
    const leg = await this.openRelay(call, call.twiml ?? "");
    if (options.socketFirst) await this.report(call, "in-progress");
    return leg;
  }

  /** The call ends without connecting: busy, no answer, failed, or given up by the caller. */
  async finish(callSid: string, status: "busy" | "no-answer" | "failed" | "canceled"): Promise<WebhookAnswer | undefined> {
    const call = this.call(callSid);
    call.status = status;
    call.endedAt = new Date();
    return this.report(call, status);
  }

  /** The far party hangs up: the socket closes, then `completed` with `CallDuration`. */
  hangUp(callSid: string): Promise<WebhookAnswer | undefined> {
    return this.complete(this.call(callSid));
  }

  /**
   * Someone calls one of the account's numbers: Twilio POSTs the number's voice webhook and runs
   * the answer; ConversationRelay TwiML opens the socket (unless `connect: false`).
   */
  async callIn(options: {
    from: string;
    to: string;
    callSid?: string;
    connect?: boolean;
  }): Promise<{ answer: WebhookAnswer; call: StandInCall; leg: RelayLeg | null }> {
    const number = [...this.numbers.values()].find((n) => n.phoneNumber === options.to);
    if (!number?.voiceUrl) throw new Error(`${options.to} is not a number of the stand-in's account with a voice URL`);
    const call: StandInCall = {
      sid: options.callSid ?? twilioSid("CA"),
      from: options.from,
      to: options.to,
      direction: "inbound",
      status: "ringing",
      created: new Date(),
      answeredAt: null,
      endedAt: null,
      phoneNumberSid: number.sid,
      twiml: null,
      statusCallback: number.statusCallback,
      statusCallbackEvents: ["completed"],
      machineDetection: null,
      asyncAmdStatusCallback: null,
    };
    this.calls.set(call.sid, call);
    const answer = await this.post(number.voiceUrl, { ...this.callParams(call), CallStatus: "ringing" });
    call.twiml = answer.text;
    const relay = answer.status === 200 ? readRelayTwiml(answer.text) : null;
    if (!relay || options.connect === false) return { answer, call, leg: null };
    call.status = "in-progress";
    call.answeredAt = new Date();
    return { answer, call, leg: await this.openRelay(call, answer.text) };
  }

  /**
   * Answering machine detection's verdict on a call placed with `AsyncAmd`: Twilio POSTs the
   * `AsyncAmdStatusCallback` with `AnsweredBy` (human, machine_start, machine_end_beep,
   * machine_end_silence, machine_end_other, fax, unknown) and `MachineDetectionDuration` (ms).
   */
  async amdVerdict(callSid: string, answeredBy: string, extra: Record<string, string> = {}): Promise<WebhookAnswer> {
    const call = this.call(callSid);
    if (!call.asyncAmdStatusCallback) throw new Error(`call ${callSid} was placed without AsyncAmd`);
    return this.post(call.asyncAmdStatusCallback, {
      AccountSid: this.accountSid,
      CallSid: call.sid,
      AnsweredBy: answeredBy,
      MachineDetectionDuration: "4120",
      ...extra,
    });
  }

  /** The call's recordings at the stand-in, oldest first. */
  recordingsOf(callSid: string) {
    return [...this.recordings.values()].filter((r) => r.callSid === callSid);
  }

  /** Someone texts one of the account's numbers: Twilio POSTs the number's messaging webhook. */
  async textIn(options: { from: string; to: string; body: string; messageSid?: string }): Promise<WebhookAnswer> {
    const number = [...this.numbers.values()].find((n) => n.phoneNumber === options.to);
    if (!number?.smsUrl) throw new Error(`${options.to} is not a number of the stand-in's account with an SMS URL`);
    const sid = options.messageSid ?? twilioSid("SM");
    const keyword = options.body.trim().toUpperCase();
    if (STOP_WORDS.has(keyword)) this.optedOut.add(`${options.to}|${options.from}`);
    if (START_WORDS.has(keyword)) this.optedOut.delete(`${options.to}|${options.from}`);
    return this.post(number.smsUrl, {
      ToCountry: "US",
      SmsMessageSid: sid,
      NumMedia: "0",
      SmsSid: sid,
      SmsStatus: "received",
      Body: options.body,
      FromCountry: "US",
      To: options.to,
      NumSegments: "1",
      MessageSid: sid,
      AccountSid: this.accountSid,
      From: options.from,
      ApiVersion: "2010-04-01",
    });
  }

  /** The text the service sent last. */
  lastMessage(): StandInMessage {
    const sent = [...this.messages.values()];
    if (sent.length === 0) throw new Error("the service sent no text through the stand-in");
    return sent.at(-1)!;
  }

  /**
   * A sent text's status changes, and Twilio POSTs its StatusCallback as it documents ("Track the
   * Message Status of Outbound Messages"): MessageSid, MessageStatus (and SmsSid, SmsStatus), and
   * ErrorCode for `failed` and `undelivered`. No callback is sent for the initial `queued`.
   */
  async messageStatus(
    messageSid: string,
    status: "sending" | "sent" | "delivered" | "undelivered" | "failed",
    options: { errorCode?: number; extra?: Record<string, string> } = {},
  ): Promise<WebhookAnswer | undefined> {
    const message = this.messages.get(messageSid);
    if (!message) throw new Error(`no text ${messageSid} at the stand-in`);
    message.status = status;
    if (options.errorCode !== undefined) message.errorCode = options.errorCode;
    if (!message.statusCallback) return undefined;
    const params: Record<string, string> = {
      AccountSid: this.accountSid,
      ApiVersion: "2010-04-01",
      From: message.from,
      To: message.to,
      MessageSid: message.sid,
      MessageStatus: status,
      SmsSid: message.sid,
      SmsStatus: status,
      ...(options.errorCode !== undefined ? { ErrorCode: String(options.errorCode) } : {}),
      ...(status === "delivered" ? { RawDlrDoneDate: new Date().toISOString().slice(2, 16).replace(/\D/g, "") } : {}),
    };
    return this.post(message.statusCallback, { ...params, ...options.extra });
  }

  /** A status callback for the call, as Twilio sends it; `extra` overrides fields (a replay, a forgery). */
  statusCallback(call: StandInCall, status: string, extra: Record<string, string> = {}): Promise<WebhookAnswer> {
    const params: Record<string, string> = {
      ...this.callParams(call),
      CallStatus: status,
      Timestamp: rfc2822(new Date()),
      CallbackSource: "call-progress-events",
      SequenceNumber: "0",
    };
    if (ENDED.has(status)) {
      const seconds = call.answeredAt && call.endedAt ? Math.ceil((call.endedAt.getTime() - call.answeredAt.getTime()) / 1000) : 0;
      Object.assign(params, { CallDuration: String(seconds), Duration: String(Math.ceil(seconds / 60)) });
    }
    return this.post(call.statusCallback!, { ...params, ...extra });
  }

  /** POSTs a form to the service as Twilio does, signed (or with the given signature; null: none). */
  async post(url: string, params: Record<string, string>, options: { signature?: string | null } = {}): Promise<WebhookAnswer> {
    const signature = options.signature === undefined ? twilioSignature(this.authToken, url, params) : options.signature;
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(signature === null ? {} : { "X-Twilio-Signature": signature }) },
      body: new URLSearchParams(params).toString(),
    });
    return { status: res.status, text: await res.text() };
  }

  /** Waits for what the stand-in does on its own after answering the service (ending calls). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Fails with every request that did not match Twilio's document. */
  expectValid(): void {
    if (this.violations.length > 0) throw new Error(`requests to Twilio that do not match its OpenAPI:\n${this.violations.join("\n")}`);
  }

  override async close(): Promise<void> {
    for (const leg of this.legs.values()) leg.close();
    await super.close();
  }

  protected override updated(call: StandInCall, status: string | undefined): void {
    // `canceled` hangs up a call not yet answered; `completed` any call.
    if (ENDED.has(call.status) || (status === "canceled" && call.status === "in-progress")) return;
    if (status === "canceled") {
      call.status = "canceled";
      call.endedAt = new Date();
      this.track(this.report(call, "canceled"));
    } else if (status === "completed") {
      this.track(this.complete(call));
    }
  }

  private call(callSid: string): StandInCall {
    const call = this.calls.get(callSid);
    if (!call) throw new Error(`no call ${callSid} at the stand-in`);
    return call;
  }

  private callParams(call: StandInCall): Record<string, string> {
    return {
      AccountSid: this.accountSid,
      ApiVersion: "2010-04-01",
      CallSid: call.sid,
      Called: call.to,
      Caller: call.from,
      Direction: call.direction,
      From: call.from,
      To: call.to,
      FromCountry: "US",
      ToCountry: "US",
    };
  }

  /** Sends the status callback if the call asked for that event. */
  private async report(call: StandInCall, status: string): Promise<WebhookAnswer | undefined> {
    call.status = status === "initiated" ? "queued" : status;
    if (!call.statusCallback || !call.statusCallbackEvents.includes(EVENT_OF[status] ?? "completed")) return undefined;
    return this.statusCallback(call, status);
  }

  private async complete(call: StandInCall): Promise<WebhookAnswer | undefined> {
    if (ENDED.has(call.status)) return undefined;
    call.endedAt = new Date();
    this.legs.get(call.sid)?.close();
    const bridge = this.bridged.get(call.sid);
    if (bridge) {
      // The bridge ends with the call: the Dial's action hears `completed` (its TwiML is not run, the caller is gone).
      this.bridged.delete(call.sid);
      const seconds = Math.ceil((call.endedAt.getTime() - bridge.answeredAt!.getTime()) / 1000);
      await this.dialAction(call, bridge, "completed", { CallStatus: "completed", DialCallDuration: String(seconds) });
    }
    const reported = await this.report(call, call.answeredAt ? "completed" : "canceled");
    await this.finishRecordings(call);
    return reported;
  }

  /** The call ended: its recordings complete, each reported to its status callback (signed). */
  private async finishRecordings(call: StandInCall): Promise<void> {
    for (const recording of this.recordingsOf(call.sid)) {
      if (recording.status !== "in-progress") continue;
      recording.status = "completed";
      recording.duration = Math.round((call.endedAt!.getTime() - recording.started.getTime()) / 1000);
      if (!recording.statusCallback || !recording.statusCallbackEvents.includes("completed")) continue;
      await this.post(recording.statusCallback, {
        AccountSid: this.accountSid,
        CallSid: call.sid,
        RecordingSid: recording.sid,
        RecordingUrl: `${this.url}/2010-04-01/Accounts/${this.accountSid}/Recordings/${recording.sid}`,
        RecordingStatus: "completed",
        RecordingDuration: String(recording.duration),
        RecordingChannels: String(recording.channels),
        RecordingStartTime: rfc2822(recording.started),
        RecordingSource: "StartCallRecordingAPI",
        RecordingTrack: "both",
        ErrorCode: "0",
      });
    }
  }

  /**
   * The ConversationRelay session ended (the service's `end`): Twilio closes the socket and, with
   * `<Connect action>`, POSTs it the session's end (`SessionStatus`, `SessionDuration`, and the
   * `end` frame's `handoffData` as `HandoffData`), then runs the TwiML it answers.
   */
  private async sessionEnded(call: StandInCall, action: string, end: { handoffData?: string }, openedAt: Date): Promise<void> {
    this.legs.get(call.sid)?.close();
    const params: Record<string, string> = {
      ...this.callParams(call),
      CallStatus: "in-progress",
      SessionId: twilioSid("VX"),
      SessionStatus: "ended",
      SessionDuration: String(Math.ceil((Date.now() - openedAt.getTime()) / 1000)),
      ...(end.handoffData !== undefined ? { HandoffData: end.handoffData } : {}),
    };
    const answer = await this.post(action, params);
    this.connectActions.push({ callSid: call.sid, params, answer });
    await this.runTwiml(call, answer.status === 200 ? answer.text : "");
  }

  /** Runs the TwiML the service answered mid-call: a `<Dial>`, ConversationRelay again, or the end. */
  private async runTwiml(call: StandInCall, twiml: string): Promise<void> {
    if (ENDED.has(call.status)) return;
    call.twiml = twiml;
    if (/<Dial[\s>]/.test(twiml)) return this.dial(call, twiml);
    if (readRelayTwiml(twiml)) {
      await this.openRelay(call, twiml);
      return;
    }
    await this.complete(call);
  }

  /**
   * Follows `<Dial action timeout><Number url statusCallback ...>`: the person's phone answers or
   * not (dialOutcome). Answered: the `<Number url>` TwiML is fetched and played to them (its
   * `<Say>`s are the whisper), the Number's `answered` status callback is sent, and the caller is
   * bridged until one side hangs up. Not answered: the Dial's `action` hears `DialCallStatus`, and
   * its TwiML runs (ConversationRelay again for a warm transfer).
   */
  private async dial(call: StandInCall, twiml: string): Promise<void> {
    const dialTag = /<Dial(\s[^>]*)?>/.exec(twiml)!;
    const numberTag = /<Number(\s[^>]*)?>([^<]+)<\/Number>/.exec(twiml);
    if (!numberTag) throw new Error(`the <Dial> has no <Number>: ${twiml}`);
    const dial: StandInDial = {
      callSid: call.sid,
      to: unescapeXml(numberTag[2]!.trim()),
      outcome: dialOutcome(unescapeXml(numberTag[2]!.trim())),
      dial: attributesOf(dialTag[1] ?? ""),
      number: attributesOf(numberTag[1] ?? ""),
      whisper: null,
      childSid: twilioSid("CA"),
      answeredAt: null,
    };
    this.dials.push(dial);
    const child = { ...this.callParams(call), CallSid: dial.childSid, ParentCallSid: call.sid, To: dial.to, Called: dial.to, Direction: "outbound-dial" };
    if (dial.outcome !== "answered") {
      const answer = await this.dialAction(call, dial, dial.outcome, { CallStatus: "in-progress", DialCallDuration: "0" });
      if (answer) await this.runTwiml(call, answer.status === 200 ? answer.text : "");
      return;
    }
    dial.answeredAt = new Date();
    if (dial.number.url) {
      const whisper = await this.post(dial.number.url, { ...child, CallStatus: "in-progress" });
      dial.whisper = [...whisper.text.matchAll(/<Say[^>]*>([^<]*)<\/Say>/g)].map((m) => unescapeXml(m[1]!));
    }
    const events = (dial.number.statusCallbackEvent ?? "").split(/\s+/);
    if (dial.number.statusCallback && events.includes("answered")) {
      await this.post(dial.number.statusCallback, {
        ...child,
        CallStatus: "in-progress",
        Timestamp: rfc2822(new Date()),
        CallbackSource: "call-progress-events",
        SequenceNumber: "0",
      });
    }
    this.bridged.set(call.sid, dial);
  }

  /** The Dial's `action` callback: how the dial went (`DialCallStatus`), as Twilio posts it. */
  private async dialAction(call: StandInCall, dial: StandInDial, status: string, extra: Record<string, string>): Promise<WebhookAnswer | undefined> {
    if (!dial.dial.action) return undefined;
    return this.post(dial.dial.action, {
      ...this.callParams(call),
      DialCallSid: dial.childSid,
      DialCallStatus: status,
      DialBridged: String(status === "completed"),
      ...extra,
    });
  }

  private async openRelay(call: StandInCall, twiml: string): Promise<RelayLeg> {
    const relay = readRelayTwiml(twiml);
    if (!relay) throw new Error(`the call's TwiML has no <ConversationRelay>: ${twiml}`);
    const leg = await RelayLeg.connect(relay.url, this.authToken);
    this.legs.set(call.sid, leg);
    const openedAt = new Date();
    // The service's `end` ends the session: Twilio asks the <Connect action>, if any, what next;
    // with none (and no TwiML after <Connect>), it hangs up.
    leg.ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as { type?: string; handoffData?: string };
      if (frame.type !== "end") return;
      this.track(relay.action ? this.sessionEnded(call, relay.action, frame, openedAt) : this.complete(call));
    });
    leg.setup({ callSid: call.sid, accountSid: this.accountSid, from: call.from, to: call.to, direction: call.direction, parameters: relay.parameters });
    if (relay.attributes.welcomeGreeting) leg.greet(relay.attributes.welcomeGreeting);
    return leg;
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }
}
