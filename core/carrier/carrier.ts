import type { CallStatus } from "../db/schema/calls.js";

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
  /** Connects the carrier to the service's handlers for what it reports. */
  start(signals: CarrierSignals): void;
  /** Buys a number; `isTaken` lets the carrier skip numbers the service has ever used. */
  buyNumber(request: NumberRequest, isTaken: (phoneNumber: string) => Promise<boolean>): Promise<{ phoneNumber: string; carrierRef: string }>;
  /** Takes over a number bought elsewhere; throws CarrierRefusal when the carrier will not. */
  attachNumber(phoneNumber: string): Promise<{ carrierRef: string }>;
  releaseNumber(number: { phoneNumber: string; carrierRef: string | null }): Promise<void>;
  /** Starts an outbound call. Its progress comes back through CarrierSignals.callStatus. */
  placeCall(call: { callId: string; from: string; to: string; voiceId: string }): Promise<{ carrierRef: string }>;
  /**
   * Ends a live or ringing call that the service has already recorded as ended (`status` is how:
   * `completed` if it had been answered, `canceled` if not). Never throws: the end is recorded.
   */
  hangupCall(call: { callId: string; carrierRef: string | null; status: CallStatus }): Promise<void>;
  /** Speaks a line into a live call. */
  speak(callId: string, speech: Speech): Promise<void>;
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
  /** A text arrived on one of the service's numbers. */
  inboundSms(message: { to: string; from: string; text: string; carrierRef: string }): Promise<InboundSmsDecision>;
}

export type EndedBy = "agent" | "caller" | "carrier" | "service";

/** What a carrier knows about a status change beyond the status. */
export interface StatusReport {
  /** The talk time the carrier measured, in whole seconds (on an end). */
  durationSeconds?: number;
}

/** Why a call or text is turned away: nobody answers the number, or the account cannot pay. */
export type Refusal = "not_in_service" | "insufficient_balance";
export type InboundCallDecision = { accepted: true; callId: string } | { accepted: false; reason: Refusal };
export type InboundSmsDecision = { accepted: true; messageId: string } | { accepted: false; reason: Refusal };

/**
 * A carrier refusing a request for a reason the client can act on (a 4xx, not a 500):
 * - `no_numbers_available`: nothing matches the request (409);
 * - `number_unavailable`: the number asked for is no longer to be had (409);
 * - `unsupported`: the carrier does not offer what was asked (422 on `field`);
 * - `invalid_number`: the number is not one the carrier can reach or use (422 on `field`).
 */
export class CarrierRefusal extends Error {
  override name = "CarrierRefusal";
  constructor(
    readonly reason: "no_numbers_available" | "number_unavailable" | "unsupported" | "invalid_number",
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

/** A WebSocket endpoint the carrier connects to (a media or text session of one call). */
export interface CarrierSocketEndpoint {
  /** The paths it serves. */
  pattern: RegExp;
  /**
   * Checks an upgrade request before the socket opens; throws an AppError to refuse it (it
   * becomes the HTTP answer). Returns the session that the socket's frames go to.
   */
  accept(request: { url: string; headers: Record<string, string | string[] | undefined> }): Promise<CarrierSocketSession>;
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
