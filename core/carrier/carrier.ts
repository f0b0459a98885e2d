import type { CallStatus } from "../db/schema/calls.js";
import type { OutboundSmsStatus } from "../db/schema/messages.js";

export type NumberType = "local" | "toll_free" | "mobile";

export interface NumberRequest {
  country: string;
  numberType: NumberType;
  areaCode?: string | undefined;
}

/** A speech line for the far party: final answers, interim lines and fillers. */
export interface Speech {
  text: string;
  final: boolean;
  turnId: string | null;
}

/**
 * A telephone company, as the service needs it. Shaped for Twilio (REST for numbers and calls,
 * signed webhooks for status and texts, ConversationRelay for text in and out of a live call);
 * the sandbox carrier implements it with no telephone company at all.
 *
 * Outbound requests are methods here. What the carrier reports back (a call arriving, a status
 * change, a finished caller turn, an interruption, keypad digits, a text) goes to the
 * CarrierSignals the service hands it in `start`.
 */
export interface Carrier {
  readonly name: string;
  /**
   * What the gateway must serve for this carrier (webhooks, a media socket), or none: the gateway
   * mounts exactly these, so a carrier's endpoints exist only while it is the active one.
   */
  readonly endpoints?: CarrierEndpoints;
  /**
   * The other end of calls and texts, played by the service's own clients: only a carrier with no
   * telephone network behind it (the sandbox) has one.
   */
  readonly farParty?: FarParty;
  /** Connects the carrier to the service's handlers for what it reports. */
  start(signals: CarrierSignals): void;
  /** Buys a number; `isTaken` lets the carrier skip numbers the service has ever used. */
  buyNumber(request: NumberRequest, isTaken: (phoneNumber: string) => Promise<boolean>): Promise<{ phoneNumber: string; carrierRef: string }>;
  /** Takes over a number bought elsewhere; throws CarrierRefusal when the carrier will not. */
  attachNumber(phoneNumber: string): Promise<{ carrierRef: string }>;
  releaseNumber(number: { phoneNumber: string; carrierRef: string | null }): Promise<void>;
  /**
   * Starts an outbound call. Its progress comes back through CarrierSignals.callStatus. A
   * `greeting` is the carrier's to speak as soon as the callee's audio connects (the service
   * records it in the transcript at the answer).
   */
  placeCall(call: { callId: string; from: string; to: string; voiceId: string; greeting?: string | null } & CallExtras): Promise<{ carrierRef: string }>;
  /**
   * Ends a live or ringing call that the service has already recorded as ended (`status` is how:
   * `completed` if it had been answered, `canceled` if not). Never throws: the end is recorded.
   */
  dropCall(call: { callId: string; carrierRef: string | null; status: CallStatus }): Promise<void>;
  /** Speaks a line into a live call. */
  speak(callId: string, speech: Speech): Promise<void>;
  /** Plays keypad tones into a live call: 0-9, `*`, `#`, and `w` for a half-second pause. */
  sendDigits(callId: string, digits: string): Promise<void>;
  /** The audio of a recording the carrier reported ready (CarrierSignals.recordingReady). */
  fetchRecording(recording: { carrierRef: string; durationSeconds: number }): Promise<RecordingAudio>;
  /** Deletes a recording at the carrier; one the carrier no longer has is not an error. */
  deleteRecording(recording: { carrierRef: string }): Promise<void>;
  /**
   * Sends a text from one of the service's numbers; it is recorded (queued) before the carrier is
   * asked. Its progress comes back through CarrierSignals.smsStatus. Throws CarrierRefusal
   * (`recipient_opted_out`, `invalid_number` on `to_number`) or CarrierUnavailable.
   */
  sendSms(message: OutboundSms): Promise<{ carrierRef: string }>;
  /**
   * Hands a live call to a person (core/calls/transfer.ts has recorded it as dialing): the agent's
   * session ends, `to` is dialled, and the outcome comes back through CarrierSignals.transferOutcome.
   * A cold transfer that finds nobody ends the call (reported through callStatus); a warm one
   * gives the caller back to the agent.
   */
  transferCall(call: CallTransfer): Promise<void>;
  close(): Promise<void>;
}

/** What a carrier reports to the service. Implemented by core's call engine. */
export interface CarrierSignals {
  /** A call is arriving on one of the service's numbers. */
  inboundCall(call: { to: string; from: string; carrierRef: string }): Promise<InboundCallDecision>;
  /**
   * A call changed status; `endedBy` says who ended it when the status is terminal. A carrier that
   * measures the talk time itself reports it with the end (`durationSeconds`): that is what is billed.
   */
  callStatus(callId: string, status: CallStatus, endedBy?: EndedBy, report?: StatusReport): Promise<void>;
  /** The caller finished a turn. Returns the turn it opened (or amended). */
  callerUtterance(callId: string, text: string, input?: "speech" | "dtmf"): Promise<{ turnId: string }>;
  /** The caller spoke over the agent. */
  callerInterrupted(callId: string): Promise<void>;
  /** Machine detection's verdict on an outbound call placed with `machineDetection`. */
  answeredBy(callId: string, answeredBy: AnsweredBy): Promise<void>;
  /** A call's recording is finished and stored at the carrier. */
  recordingReady(recording: { callId: string; carrierRef: string; durationSeconds: number }): Promise<void>;
  /**
   * How a transfer went: the person answered (the caller is bridged to them), or the dial found
   * nobody (`busy`, `no-answer`, which includes the transfer timeout, or `failed`).
   */
  transferOutcome(callId: string, outcome: TransferOutcome): Promise<void>;
  /** A text arrived on one of the service's numbers. */
  inboundSms(message: { to: string; from: string; text: string; carrierRef: string }): Promise<InboundSmsDecision>;
  /** A sent text changed status (applied once, never backwards). */
  smsStatus(report: SmsStatusReport): Promise<void>;
}

/** A text to send. */
export interface OutboundSms {
  messageId: string;
  from: string;
  to: string;
  text: string;
}

/** What a carrier reports about a sent text: ours (`messageId`) and its id for it, when known. */
export interface SmsStatusReport {
  messageId: string;
  carrierRef?: string | undefined;
  status: OutboundSmsStatus;
  /** The carrier's error code, on `failed` or `undelivered`. */
  errorCode?: string | undefined;
}

/**
 * What a caller or callee does, on a carrier whose far party the client plays. Each reports
 * through the CarrierSignals, as a real carrier would report a person doing it.
 */
export interface FarParty {
  /** A call arriving from the outside world on one of the service's numbers. */
  ringInbound(call: { to: string; from: string }): Promise<InboundCallDecision>;
  /** A text arriving from the outside world on one of the service's numbers. */
  deliverSms(message: { to: string; from: string; text: string }): Promise<InboundSmsDecision>;
  /** The far party of a call finishes a turn of speech. */
  say(callId: string, text: string): Promise<{ turnId: string }>;
  /** The far party presses keys. */
  pressKeys(callId: string, digits: string): Promise<{ turnId: string }>;
  /** The far party speaks over the agent. */
  interrupt(callId: string): Promise<void>;
  /** The far party hangs up. */
  hangup(callId: string): Promise<void>;
}

/** A transfer the carrier carries out: who to dial, and what a warm one says to them first. */
export interface CallTransfer {
  callId: string;
  carrierRef: string | null;
  to: string;
  mode: "cold" | "warm";
  whisper: string | null;
}

export type TransferOutcome = "answered" | "busy" | "no-answer" | "failed";

export type EndedBy = "agent" | "caller" | "carrier" | "service";

/** Who answered a call, as the carrier's machine detection tells. */
export type AnsweredBy = "human" | "machine" | "fax" | "unknown";

/** What a call asks of the carrier beyond connecting it (docs/decisions/0085-voicemail-and-recording.md). */
export interface CallExtras {
  /** Outbound: listen for an answering machine and report who answered (CarrierSignals.answeredBy). */
  machineDetection?: "detect" | "leave_message" | undefined;
  /**
   * Record the call: the other party hears this notice first, and the recording starts only once
   * it has been said; the finished recording is reported through CarrierSignals.recordingReady.
   */
  recordingNotice?: string | undefined;
}

/** A recording's audio, streamed from the carrier. */
export interface RecordingAudio {
  contentType: string;
  contentLength?: number | undefined;
  body: AsyncIterable<Uint8Array>;
}

/** What a carrier knows about a status change beyond the status. */
export interface StatusReport {
  /** The talk time the carrier measured, in whole seconds (on an end). */
  durationSeconds?: number;
}

/** Why a call or text is turned away: nobody answers the number, or the account cannot pay. */
export type Refusal = "not_in_service" | "insufficient_balance";
export type InboundCallDecision = { accepted: true; callId: string; recordingNotice?: string | undefined } | { accepted: false; reason: Refusal };
export type InboundSmsDecision = { accepted: true; messageId: string } | { accepted: false; reason: Refusal };

/**
 * A carrier refusing a request for a reason the client can act on (a 4xx, not a 500):
 * - `no_numbers_available`: nothing matches the request (409);
 * - `number_unavailable`: the number asked for is no longer to be had (409);
 * - `unsupported`: the carrier does not offer what was asked (422 on `field`);
 * - `invalid_number`: the number is not one the carrier can reach or use (422 on `field`);
 * - `recipient_opted_out`: the recipient of a text asked the carrier to send it no more (409).
 */
export class CarrierRefusal extends Error {
  override name = "CarrierRefusal";
  constructor(
    readonly reason: "no_numbers_available" | "number_unavailable" | "unsupported" | "invalid_number" | "recipient_opted_out",
    message: string,
    /** The request field at fault, for a 422. */
    readonly field?: string,
  ) {
    super(message);
  }
}

/**
 * The carrier could not serve the request: unreachable, timing out, failing (5xx) or refusing
 * the service's credentials. Nothing was done at the carrier as far as the service can tell (a 502).
 */
export class CarrierUnavailable extends Error {
  override name = "CarrierUnavailable";
}

/** The endpoints a carrier declares; the gateway serves them and hands over what arrives. */
export interface CarrierEndpoints {
  webhooks: CarrierWebhook[];
  sockets: CarrierSocketEndpoint[];
}

/** An HTTP POST endpoint the carrier calls (its webhooks), taking a form-encoded body. */
export interface CarrierWebhook {
  /** The path, e.g. `/twilio/voice`. */
  path: string;
  /** Answers one request; an AppError it throws becomes a problem response. */
  handle(request: CarrierHttpRequest): Promise<CarrierHttpResponse>;
}

export interface CarrierHttpRequest {
  /** Path and query exactly as requested (`/twilio/status?call_id=...`). */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The form fields of the body. */
  form: Record<string, string | string[]>;
}

export interface CarrierHttpResponse {
  status: number;
  contentType?: string;
  body?: string;
}

/**
 * A WebSocket endpoint of the carrier: one the carrier itself connects to (a media or text
 * session of one call), or one a client of the service opens with its account's API key or
 * agent token (the sandbox's softphone). For the latter the gateway authenticates the upgrade and
 * counts the socket among the account's (ACCOUNT_MAX_SOCKETS) before `accept` sees the account,
 * and closes the socket (4401) when that credential is revoked.
 */
export type CarrierSocketEndpoint =
  | (SocketEndpointShape & { openedBy: "carrier"; accept(request: CarrierUpgrade): Promise<CarrierSocketSession> })
  | (SocketEndpointShape & { openedBy: "account"; accept(request: CarrierUpgrade & { accountId: string }): Promise<CarrierSocketSession> });

interface SocketEndpointShape {
  /** Names the endpoint in the log. */
  name: string;
  /** The paths it serves. */
  pattern: RegExp;
  /** The largest frame it takes, in bytes: a larger one closes the socket (1009). */
  maxFrameBytes: number;
}

/**
 * An upgrade request, for `accept` to check before the socket opens; it throws an AppError to
 * refuse it (that becomes the HTTP answer), or returns the session the socket's frames go to.
 */
export interface CarrierUpgrade {
  /** Path and query exactly as requested. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** What the endpoint's pattern captured from the path, still percent-encoded. */
  captured: string[];
}

/** One open socket, as the carrier adapter sees it: frames in, and a way to answer. */
export interface CarrierSocketSession {
  opened(socket: CarrierSocket): void;
  message(data: string): void;
  closed(): void;
}

/** The gateway's side of a socket, handed to the session when it opens. */
export interface CarrierSocket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
