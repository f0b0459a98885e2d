import type { Bus } from "../../bus.js";
import type { TwilioConfig } from "../../config.js";
import type { Database } from "../../db/database.js";
import type { CallStatus } from "../../db/schema/calls.js";
import type { Logger } from "../../logger.js";
import type { CallExtras, CallTransfer, Carrier, CarrierEndpoints, CarrierSignals, NumberRequest, OutboundSms, RecordingAudio, Speech } from "../carrier.js";
import { attachTwilioNumber, buyTwilioNumber, releaseTwilioNumber } from "./numbers.js";
import { deleteTwilioRecording, fetchTwilioRecording, startTwilioRecording } from "./recordings.js";
import { RelaySessions } from "./relay-sessions.js";
import { createTwilioClient, type TwilioClient, twilioRequest } from "./rest.js";
import { relayTwiml } from "./twiml.js";
import { twilioUrls } from "./urls.js";
import { twilioWebhooks } from "./webhooks.js";

export interface TwilioCarrierOptions {
  config: TwilioConfig;
  /** The public base URL (BASE_URL, required with Twilio): every URL Twilio is given starts with it. */
  baseUrl: string;
  db: Database;
  bus: Bus;
  logger: Logger;
  /** What the other party of a recorded call hears first (RECORDING_NOTICE). */
  recordingNotice: string;
  /** How long a transfer rings the person (TRANSFER_TIMEOUT_MS). */
  transferTimeoutMs?: number;
}

/**
 * The production carrier: Twilio Programmable Voice with ConversationRelay. Numbers
 * and calls through the official SDK's REST client; inbound calls, status and texts through
 * signed webhooks; the live call as text over a ConversationRelay socket per call.
 */
export class TwilioCarrier implements Carrier {
  readonly name = "twilio";
  readonly endpoints: CarrierEndpoints;
  private signals: CarrierSignals | undefined;
  private readonly client: TwilioClient;
  private readonly relays: RelaySessions;
  private readonly urls: ReturnType<typeof twilioUrls>;
  private readonly logger: Logger;
  private readonly config: TwilioConfig;

  constructor(options: TwilioCarrierOptions) {
    this.client = createTwilioClient(options.config);
    this.urls = twilioUrls(options.baseUrl);
    this.logger = options.logger;
    this.config = options.config;
    const signals = () => this.reporting;
    this.relays = new RelaySessions({
      authToken: options.config.authToken,
      baseUrl: options.baseUrl,
      db: options.db,
      bus: options.bus,
      logger: options.logger,
      signals,
      startRecording: (call) => startTwilioRecording(this.client, this.urls, this.logger, call),
    });
    this.endpoints = {
      webhooks: twilioWebhooks({
        config: options.config,
        client: this.client,
        baseUrl: options.baseUrl,
        db: options.db,
        logger: options.logger,
        signals,
        recordingNotice: options.recordingNotice ?? "This call is recorded.",
        transferTimeoutMs: options.transferTimeoutMs ?? 30_000,
      }),
      sockets: [this.relays.endpoint()],
    };
  }

  start(signals: CarrierSignals): void {
    this.signals = signals;
  }

  private get reporting(): CarrierSignals {
    if (!this.signals) throw new Error("Twilio carrier used before start()");
    return this.signals;
  }

  private get numberWebhooks() {
    return { voiceUrl: this.urls.voice, smsUrl: this.urls.sms, statusCallback: this.urls.status };
  }

  buyNumber(request: NumberRequest, isTaken: (phoneNumber: string) => Promise<boolean>) {
    return buyTwilioNumber(this.client, request, this.numberWebhooks, isTaken, this.logger);
  }

  attachNumber(phoneNumber: string) {
    return attachTwilioNumber(this.client, phoneNumber, this.numberWebhooks);
  }

  releaseNumber(number: { phoneNumber: string; carrierRef: string | null }): Promise<void> {
    return releaseTwilioNumber(this.client, number.carrierRef);
  }

  /** `Calls` create with the ConversationRelay TwiML inline and status callbacks naming our call. */
  async placeCall(call: { callId: string; from: string; to: string; voiceId: string; greeting?: string | null } & CallExtras) {
    const created = await twilioRequest(
      "the call",
      () =>
        this.client.calls.create({
          to: call.to,
          from: call.from,
          twiml: relayTwiml({
            socketUrl: this.urls.relayOf(call.callId),
            callId: call.callId,
            voiceId: call.voiceId,
            greeting: call.greeting,
            recordingNotice: call.recordingNotice,
            action: this.urls.connectOf(call.callId),
          }),
          statusCallback: this.urls.statusOf(call.callId),
          statusCallbackMethod: "POST",
          statusCallbackEvent: ["initiated", "ringing", "answered", "completed"],
          // Answering machine detection in the background (the call connects at once); its
          // verdict comes to the AMD callback after the greeting's end (the beep) with DetectMessageEnd.
          ...(call.machineDetection
            ? {
                machineDetection: "DetectMessageEnd",
                asyncAmd: "true",
                asyncAmdStatusCallback: this.urls.amdOf(call.callId),
                asyncAmdStatusCallbackMethod: "POST",
              }
            : {}),
        }),
      { to: call.to, number: "agent_id" },
    );
    return { carrierRef: created.sid };
  }

  /**
   * A connected call whose relay socket is here ends with `end` (Twilio then hangs up); anything
   * else (ringing, or its socket elsewhere) through `Calls` update. The end is already recorded,
   * so a failure here is logged for the operator rather than undoing it.
   */
  async dropCall(call: { callId: string; carrierRef: string | null; status: CallStatus }): Promise<void> {
    if (call.status === "completed" && this.relays.end(call.callId, "hangup")) return;
    if (!call.carrierRef) return;
    const status = call.status === "completed" ? "completed" : "canceled";
    await twilioRequest("the hang-up", () => this.client.calls(call.carrierRef!).update({ status })).catch((error: unknown) =>
      this.logger.error(
        { err: error, call_id: call.callId, call_sid: call.carrierRef },
        "Twilio did not take the hang-up; the call is ended here and billed no further",
      ),
    );
  }

  speak(callId: string, speech: Speech): Promise<void> {
    return this.relays.speak(callId, speech.text);
  }

  /** ConversationRelay's `sendDigits` message on the call's socket. */
  sendDigits(callId: string, digits: string): Promise<void> {
    return this.relays.sendDigits(callId, digits);
  }

  fetchRecording(recording: { carrierRef: string }): Promise<RecordingAudio> {
    return fetchTwilioRecording(this.config, recording.carrierRef);
  }

  deleteRecording(recording: { carrierRef: string }): Promise<void> {
    return deleteTwilioRecording(this.client, recording.carrierRef);
  }

  /** `Messages` create, with status callbacks naming our text (they may come before the answer). */
  async sendSms(message: OutboundSms) {
    const created = await twilioRequest(
      "the text",
      () =>
        this.client.messages.create({
          to: message.to,
          from: message.from,
          body: message.text,
          statusCallback: this.urls.smsStatusOf(message.messageId),
        }),
      { to: message.to, number: "from_number" },
    );
    return { carrierRef: created.sid };
  }

  /**
   * Ends the call's ConversationRelay session with `handoffData` naming the transfer; Twilio then
   * requests the `<Connect action>` URL, whose answer dials the person (webhooks.ts, `connect`).
   */
  transferCall(transfer: CallTransfer): Promise<void> {
    return this.relays.handoff(transfer.callId, { reason: "transfer", to: transfer.to, mode: transfer.mode });
  }

  async close(): Promise<void> {
    this.relays.close();
  }
}
