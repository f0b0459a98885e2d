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
  /** Connects the carrier to the service's handlers for what it reports. */
  start(signals: CarrierSignals): void;
  /** Buys a number; `isTaken` lets the carrier skip numbers the service has ever used. */
  buyNumber(request: NumberRequest, isTaken: (phoneNumber: string) => Promise<boolean>): Promise<{ phoneNumber: string; carrierRef: string }>;
  /** Takes over a number bought elsewhere; throws CarrierRefusal when the carrier will not. */
  attachNumber(phoneNumber: string): Promise<{ carrierRef: string }>;
  releaseNumber(number: { phoneNumber: string; carrierRef: string | null }): Promise<void>;
  /** Starts an outbound call. Its progress comes back through CarrierSignals.callStatus. */
  placeCall(call: { callId: string; from: string; to: string; voiceId: string }): Promise<{ carrierRef: string }>;
  /** Ends a live or ringing call; the carrier reports the resulting status. */
  hangupCall(call: { callId: string; carrierRef: string | null }): Promise<void>;
  /** Speaks a line into a live call. */
  speak(callId: string, speech: Speech): Promise<void>;
  close(): Promise<void>;
}

/** What a carrier reports to the service. Implemented by core's call engine. */
export interface CarrierSignals {
  /** A call is arriving on one of the service's numbers. */
  inboundCall(call: { to: string; from: string; carrierRef: string }): Promise<InboundCallDecision>;
  /** A call changed status; `endedBy` says who ended it when the status is terminal. */
  callStatus(callId: string, status: CallStatus, endedBy?: EndedBy): Promise<void>;
  /** The caller finished a turn. Returns the turn it opened (or amended). */
  callerUtterance(callId: string, text: string, input?: "speech" | "dtmf"): Promise<{ turnId: string }>;
  /** The caller spoke over the agent. */
  callerInterrupted(callId: string): Promise<void>;
  /** A text arrived on one of the service's numbers. */
  inboundSms(message: { to: string; from: string; text: string; carrierRef: string }): Promise<InboundSmsDecision>;
}

export type EndedBy = "agent" | "caller" | "carrier" | "service";

/** Why a call or text is turned away: nobody answers the number, or the account cannot pay. */
export type Refusal = "not_in_service" | "insufficient_balance";
export type InboundCallDecision = { accepted: true; callId: string } | { accepted: false; reason: Refusal };
export type InboundSmsDecision = { accepted: true; messageId: string } | { accepted: false; reason: Refusal };

/** A carrier refusing a request for a reason the client can act on (a 4xx, not a 500). */
export class CarrierRefusal extends Error {
  override name = "CarrierRefusal";
  constructor(
    readonly reason: "no_numbers_available" | "unsupported" | "invalid_number",
    message: string,
  ) {
    super(message);
  }
}
