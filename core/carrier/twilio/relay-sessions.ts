import type { Bus } from "../../bus.js";
import { loadCallById } from "../../calls/call-records.js";
import { TERMINAL_STATUSES } from "../../calls/schemas.js";
import { CALL_ANSWERED_BY_CHANNEL } from "../../calls/voicemail.js";
import type { Database } from "../../db/database.js";
import { AppError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { parseClientJson } from "../../schemas/json-limits.js";
import { UNSTORABLE_MESSAGE, unstorableString } from "../../schemas/validation.js";
import type { CarrierSignals, CarrierSocket, CarrierSocketEndpoint, CarrierSocketSession } from "../carrier.js";
import { requireTwilioSignature } from "./signature.js";
import { TWILIO_PATHS, twilioUrls } from "./urls.js";

/** The bus channel carrying lines to speak into a call whose relay socket another process holds. */
export const TWILIO_SPEECH_CHANNEL = "twilio.speech";

/**
 * The longest a first caller turn waits for machine detection's verdict: Twilio's detection of a
 * person ends about when their greeting ("Hello?") does, a second or two after it began; past
 * this the turn goes on without it rather than keep a person waiting.
 */
const AMD_WAIT_MS = 6_000;

/** The bus channel carrying keypad tones for a call whose relay socket another process holds. */
export const TWILIO_DIGITS_CHANNEL = "twilio.digits";
/** The bus channel carrying a session's end with handoffData, to the process that holds its socket. */
export const TWILIO_HANDOFF_CHANNEL = "twilio.handoff";

interface Dependencies {
  authToken: string;
  baseUrl: string;
  db: Database;
  bus: Bus;
  logger: Logger;
  signals: () => CarrierSignals;
  /** Starts recording a call that asked for it, once its relay is set up (after the recording notice). */
  startRecording: (call: { callId: string; callSid: string }) => Promise<void>;
}

/** A frame ConversationRelay sends (https://www.twilio.com/docs/voice/conversationrelay/websocket-messages). */
type RelayFrame = { type?: unknown; [field: string]: unknown };

/**
 * The ConversationRelay sockets of this process, one per live call. Twilio opens the socket
 * (signed, at `/twilio/relay/{call_id}`) once a call is answered and sends `setup`; then each
 * finished caller utterance is a `prompt` with `last: true`, a barge-in an `interrupt`, a key a
 * `dtmf`. The agent's lines go back as `text` tokens (`last: true` ends a line), and `end` ends
 * the session (and with it the call). A socket lives in the process Twilio connected to: lines
 * for it are sent from memory here, and published on the bus from any other process.
 */
export class RelaySessions {
  private readonly live = new Map<string, RelaySession>();
  private readonly unsubscribe: () => void;
  private readonly unsubscribeDigits: () => void;
  private readonly unsubscribeHandoff: () => void;
  private readonly unsubscribeVerdicts: () => void;
  /** Calls whose first caller turn waits for machine detection's verdict: their wake-ups. */
  private readonly awaitingVerdict = new Map<string, () => void>();

  constructor(private readonly deps: Dependencies) {
    this.unsubscribe = deps.bus.subscribe(TWILIO_SPEECH_CHANNEL, (message) => {
      this.live.get(String(message.call_id))?.sendText(String(message.text));
    });
    this.unsubscribeDigits = deps.bus.subscribe(TWILIO_DIGITS_CHANNEL, (message) => {
      this.live.get(String(message.call_id))?.send({ type: "sendDigits", digits: String(message.digits) });
    });
    this.unsubscribeHandoff = deps.bus.subscribe(TWILIO_HANDOFF_CHANNEL, (message) => {
      this.live.get(String(message.call_id))?.send({ type: "end", handoffData: String(message.handoff_data) });
    });
    this.unsubscribeVerdicts = deps.bus.subscribe(CALL_ANSWERED_BY_CHANNEL, (message) => this.awaitingVerdict.get(String(message.call_id))?.());
  }

  /**
   * Waits (at most AMD_WAIT_MS) until the call has machine detection's verdict, so that
   * `call.answered_by` reaches the agent before the first caller turn: with AsyncAmd the call
   * connects at once, and a person may speak before Twilio has decided.
   */
  async verdict(callId: string): Promise<void> {
    let wake = () => {};
    const woken = new Promise<void>((resolve) => (wake = resolve));
    this.awaitingVerdict.set(callId, wake);
    const timer = setTimeout(wake, AMD_WAIT_MS);
    try {
      const call = await loadCallById(this.deps.db, callId);
      if (call?.answeredBy == null && call?.machineDetection != null && !TERMINAL_STATUSES.has(call.status)) await woken;
    } finally {
      clearTimeout(timer);
      this.awaitingVerdict.delete(callId);
    }
  }

  /**
   * Ends the call's session with `handoffData` (JSON), wherever its socket is: Twilio then
   * requests the `<Connect action>` URL with it as `HandoffData`.
   */
  async handoff(callId: string, data: Record<string, unknown>): Promise<void> {
    const handoffData = JSON.stringify(data);
    const session = this.live.get(callId);
    if (session) session.send({ type: "end", handoffData });
    else await this.deps.bus.publish(TWILIO_HANDOFF_CHANNEL, { call_id: callId, handoff_data: handoffData }, { othersOnly: true });
  }

  /** The socket endpoint the gateway serves. */
  endpoint(): CarrierSocketEndpoint {
    const urls = twilioUrls(this.deps.baseUrl);
    return {
      name: "twilio relay",
      pattern: new RegExp(`^${TWILIO_PATHS.relay}/([^/?]+)$`),
      maxFrameBytes: 256 * 1024,
      openedBy: "carrier",
      accept: async ({ url, headers }) => {
        // The handshake is signed like a webhook: the URL Twilio was given, no parameters.
        requireTwilioSignature(this.deps.authToken, urls.relayAt(url), headers, {});
        const callId = decodeURIComponent(new URL(url, "http://x").pathname.slice(TWILIO_PATHS.relay.length + 1));
        const call = await loadCallById(this.deps.db, callId);
        if (!call) throw new AppError("not_found", `No call ${JSON.stringify(callId)}.`);
        if (TERMINAL_STATUSES.has(call.status)) throw new AppError("gone", `Call ${callId} has ended (${call.status}).`);
        return new RelaySession(this, callId, call.carrierRef, call.record, call.machineDetection !== null && call.answeredBy === null);
      },
    };
  }

  /** Speaks a line into the call: from memory if its socket is here, else through the bus. */
  async speak(callId: string, text: string): Promise<void> {
    const session = this.live.get(callId);
    if (session) session.sendText(text);
    else await this.deps.bus.publish(TWILIO_SPEECH_CHANNEL, { call_id: callId, text });
  }

  /** Plays keypad tones into the call (ConversationRelay `sendDigits`): from memory if its socket is here, else through the bus. */
  async sendDigits(callId: string, digits: string): Promise<void> {
    const session = this.live.get(callId);
    if (session) session.send({ type: "sendDigits", digits });
    else await this.deps.bus.publish(TWILIO_DIGITS_CHANNEL, { call_id: callId, digits });
  }

  /** Ends the call's relay session if this process holds it (Twilio then ends the call). */
  end(callId: string, reason: string): boolean {
    const session = this.live.get(callId);
    session?.send({ type: "end", handoffData: JSON.stringify({ reason }) });
    return session !== undefined;
  }

  bind(callId: string, session: RelaySession): void {
    this.live.set(callId, session);
  }

  unbind(callId: string, session: RelaySession): void {
    if (this.live.get(callId) === session) this.live.delete(callId);
  }

  startRecording(call: { callId: string; callSid: string }): Promise<void> {
    return this.deps.startRecording(call);
  }

  get signals(): CarrierSignals {
    return this.deps.signals();
  }

  get logger(): Logger {
    return this.deps.logger;
  }

  close(): void {
    this.unsubscribe();
    this.unsubscribeDigits();
    this.unsubscribeHandoff();
    this.unsubscribeVerdicts();
    this.live.clear();
  }
}

/** One call's socket. Frames are handled one at a time, in the order Twilio sent them. */
class RelaySession implements CarrierSocketSession {
  private socket: CarrierSocket | undefined;
  private bound = false;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly sessions: RelaySessions,
    private readonly callId: string,
    private readonly carrierRef: string | null,
    private readonly record = false,
    /** Outbound with machine detection and no verdict yet when the socket opened. */
    private awaitingVerdict = false,
  ) {}

  opened(socket: CarrierSocket): void {
    this.socket = socket;
  }

  message(data: string): void {
    this.queue = this.queue.then(() => this.handle(data)).catch((error: unknown) => this.refused(error));
  }

  closed(): void {
    this.sessions.unbind(this.callId, this);
  }

  send(frame: Record<string, unknown>): void {
    this.socket?.send(JSON.stringify(frame));
  }

  sendText(text: string): void {
    this.send({ type: "text", token: text, last: true });
  }

  private async handle(data: string): Promise<void> {
    let frame: RelayFrame;
    try {
      frame = parseClientJson(data) as RelayFrame;
    } catch {
      return this.sessions.logger.warn({ call_id: this.callId }, "ConversationRelay sent a frame that is not JSON, or is JSON over the limits");
    }
    // Refused before it reaches the database, naming the field. Not answered on the socket:
    // ConversationRelay takes no error frames (an unknown one is its error 64107).
    const unstorable = unstorableString(frame);
    if (unstorable !== undefined) {
      return this.sessions.logger.warn(
        { call_id: this.callId, type: frame.type, field: unstorable },
        `ConversationRelay frame refused: ${unstorable || "the frame"} ${UNSTORABLE_MESSAGE}`,
      );
    }
    if (frame.type === "setup") return this.setup(frame);
    if (!this.bound) return this.sessions.logger.warn({ call_id: this.callId, type: frame.type }, "ConversationRelay frame before setup ignored");
    const signals = this.sessions.signals;
    switch (frame.type) {
      case "prompt": {
        // Only a finished utterance is a turn (partial prompts are not asked for).
        const text = typeof frame.voicePrompt === "string" ? frame.voicePrompt.trim() : "";
        if (frame.last !== false && text) {
          await this.firstTurnAfterVerdict();
          await signals.callerUtterance(this.callId, text, "speech");
        }
        return;
      }
      case "interrupt":
        return signals.callerInterrupted(this.callId);
      case "dtmf":
        if (typeof frame.digit === "string" && /^[0-9*#A-D]$/.test(frame.digit)) {
          await this.firstTurnAfterVerdict();
          await signals.callerUtterance(this.callId, frame.digit, "dtmf");
        }
        return;
      case "error":
        return this.sessions.logger.warn({ call_id: this.callId, description: frame.description }, "ConversationRelay reported an error on the call");
      default:
        return this.sessions.logger.debug({ call_id: this.callId, type: frame.type }, "ConversationRelay frame ignored");
    }
  }

  /**
   * `setup` binds the socket to the call it was opened for: Twilio's CallSid and our `call_id`
   * parameter must name that call, or the socket is closed. Its arrival proves the call was
   * answered, so an outbound call still ringing here moves to in-progress (its `answered`
   * status callback may come later, and then changes nothing).
   */
  private async setup(frame: RelayFrame): Promise<void> {
    const parameters = (frame.customParameters ?? {}) as Record<string, unknown>;
    const sameCall = parameters.call_id === this.callId && (this.carrierRef === null || frame.callSid === this.carrierRef);
    if (!sameCall) {
      this.sessions.logger.warn({ call_id: this.callId, call_sid: frame.callSid }, "ConversationRelay setup names another call; socket closed");
      this.socket?.close(1008, "setup does not match the call");
      return;
    }
    this.bound = true;
    this.sessions.bind(this.callId, this);
    await this.sessions.signals.callStatus(this.callId, "in-progress");
    if (this.record && typeof frame.callSid === "string" && parameters.transfer_failed === undefined) {
      // Recording starts once, at the first session (a warm transfer that failed opens another).
      await this.sessions.startRecording({ callId: this.callId, callSid: frame.callSid });
    }
    // The caller is back after a warm transfer found nobody (webhooks.ts, transferDial): now the
    // agent can be told, and its answer has a socket to be spoken on.
    const failed = parameters.transfer_failed;
    if (failed === "busy" || failed === "no-answer" || failed === "failed") await this.sessions.signals.transferOutcome(this.callId, failed);
  }

  /** Holds the first caller turn until machine detection has spoken (frames after it queue behind). */
  private async firstTurnAfterVerdict(): Promise<void> {
    if (!this.awaitingVerdict) return;
    this.awaitingVerdict = false;
    await this.sessions.verdict(this.callId);
  }

  private refused(error: unknown): void {
    const detail = error instanceof AppError ? { code: error.code, detail: error.detail } : { err: error };
    this.sessions.logger.warn({ call_id: this.callId, ...detail }, "ConversationRelay frame not applied");
  }
}
