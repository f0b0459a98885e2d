import WebSocket from "ws";
import { twilioSid, twilioSignature } from "./signing.js";

export type RelayFrame = Record<string, any>;

/** What `<ConversationRelay>` asked for, read from the TwiML the service answered with. */
export interface RelayInstructions {
  url: string;
  /** `<Connect action>`: where Twilio asks what next when the session ends, if anywhere. */
  action: string | null;
  attributes: Record<string, string>;
  parameters: Record<string, string>;
}

export const unescapeXml = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
export const attributesOf = (tag: string) => Object.fromEntries([...tag.matchAll(/([\w-]+)="([^"]*)"/g)].map((m) => [m[1]!, unescapeXml(m[2]!)]));

/** Reads `<Connect><ConversationRelay url ...><Parameter name value/>` out of TwiML, or null. */
export function readRelayTwiml(twiml: string): RelayInstructions | null {
  const relay = /<Connect(\s[^>]*)?>\s*<ConversationRelay\s([^>]*?)\/?>([\s\S]*?)(<\/ConversationRelay>|<\/Connect>)/.exec(twiml);
  if (!relay) return null;
  const attributes = attributesOf(relay[2]!);
  const parameters = Object.fromEntries([...relay[3]!.matchAll(/<Parameter\s([^>]*?)\/>/g)].map((m) => attributesOf(m[1]!)).map((a) => [a.name!, a.value!]));
  return { url: attributes.url!, action: attributesOf(relay[1] ?? "").action ?? null, attributes, parameters };
}

/**
 * Twilio's side of a ConversationRelay socket, as its documentation describes it: it connects to
 * the TwiML's `url` with `X-Twilio-Signature` on the handshake, sends `setup`, then the caller's
 * `prompt`s (`voicePrompt`, `last`), `interrupt`s, `dtmf` and `error`s; it reads the service's
 * `text` tokens into lines (a line ends with `last: true`), its `sendDigits` (the keys it plays
 * down the line: 0-9, `*`, `#`, `w` a half-second pause; anything else is answered with an
 * `error` frame, as ConversationRelay reports a message it cannot act on) and its `end`. The
 * TwiML's `welcomeGreeting` is the first line the caller hears, spoken once the session connects.
 */
export class RelayLeg {
  readonly frames: RelayFrame[] = [];
  /** Each line the caller heard: the tokens up to one with `last: true`. */
  readonly lines: string[] = [];
  /** Each `sendDigits` the service sent that Twilio played, in order. */
  readonly digits: string[] = [];
  /** `sendDigits` messages Twilio would refuse (not 0-9, *, #, w): the service broke the protocol. */
  readonly refusedDigits: unknown[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private partial = "";
  private waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data)) as RelayFrame;
      this.frames.push(frame);
      if (frame.type === "sendDigits") {
        if (typeof frame.digits === "string" && /^[0-9*#w]+$/.test(frame.digits)) this.digits.push(frame.digits);
        else {
          this.refusedDigits.push(frame.digits);
          this.error(`Invalid message received: sendDigits digits ${JSON.stringify(frame.digits)}`);
        }
      }
      if (frame.type === "text") {
        this.partial += String(frame.token);
        if (frame.last) {
          this.lines.push(this.partial);
          this.partial = "";
        }
      }
      this.waiters.splice(0).forEach((wake) => wake());
    });
    this.closed = new Promise((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })));
    ws.on("close", () => this.waiters.splice(0).forEach((wake) => wake()));
  }

  /** Opens the socket as Twilio does (signed with the auth token); rejects with the refused status. */
  static connect(url: string, authToken: string, options: { signature?: string | null } = {}): Promise<RelayLeg> {
    const signature = options.signature === undefined ? twilioSignature(authToken, url) : options.signature;
    const ws = new WebSocket(url, { headers: signature === null ? {} : { "X-Twilio-Signature": signature } });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new RelayLeg(ws)));
      ws.once("unexpected-response", (_req, res) => reject(Object.assign(new Error(`relay upgrade refused: ${res.statusCode}`), { status: res.statusCode })));
      ws.once("error", reject);
    });
  }

  send(frame: RelayFrame): void {
    this.ws.send(JSON.stringify(frame));
  }

  setup(call: { callSid: string; accountSid: string; from: string; to: string; direction: string; parameters: Record<string, string> }): void {
    this.send({
      type: "setup",
      sessionId: twilioSid("VX"),
      accountSid: call.accountSid,
      parentCallSid: "",
      callSid: call.callSid,
      from: call.from,
      to: call.to,
      forwardedFrom: "",
      callType: "PSTN",
      callerName: "",
      direction: call.direction,
      callStatus: "IN-PROGRESS",
      customParameters: call.parameters,
    });
  }

  /** ConversationRelay speaks the TwiML's `welcomeGreeting` as the session connects: the caller's first line. */
  greet(text: string): void {
    this.lines.push(text);
  }

  /** Waits for the `index`-th `sendDigits` Twilio played (0-based), up to `ms`. */
  async digitsSent(index: number, ms = 5_000): Promise<string> {
    await this.until(
      () => this.digits.length > index,
      ms,
      () => `no sendDigits ${index}; got ${JSON.stringify(this.frames)}`,
    );
    return this.digits[index]!;
  }

  /** The caller finishes an utterance (speech recognised by Twilio). */
  say(text: string, last = true): void {
    this.send({ type: "prompt", voicePrompt: text, lang: "en-US", last });
  }

  /** The caller talks over the agent's speech. */
  interrupt(): void {
    const heard = this.lines.at(-1) ?? "";
    this.send({ type: "interrupt", utteranceUntilInterrupt: heard.slice(0, Math.ceil(heard.length / 2)), durationUntilInterruptMs: 800 });
  }

  pressKey(digit: string): void {
    this.send({ type: "dtmf", digit });
  }

  error(description: string): void {
    this.send({ type: "error", description });
  }

  /** Waits for the `index`-th line the caller hears (0-based), up to `ms`. */
  async line(index: number, ms = 5_000): Promise<string> {
    await this.until(
      () => this.lines.length > index,
      ms,
      () => `no line ${index} heard; heard ${JSON.stringify(this.lines)}`,
    );
    return this.lines[index]!;
  }

  /** Waits for the service's `end` frame. */
  async ended(ms = 5_000): Promise<RelayFrame> {
    await this.until(
      () => this.frames.some((f) => f.type === "end"),
      ms,
      () => `no end frame; got ${JSON.stringify(this.frames)}`,
    );
    return this.frames.find((f) => f.type === "end")!;
  }

  close(code = 1000): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(code);
  }

  private async until(done: () => boolean, ms: number, failure: () => string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(failure());
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }
}
