import { eq } from "drizzle-orm";
import { type CallRow, loadCallById } from "../../calls/call-records.js";
import { TERMINAL_STATUSES } from "../../calls/schemas.js";
import type { TwilioConfig } from "../../config.js";
import type { Database } from "../../db/database.js";
import { calls } from "../../db/schema/calls.js";
import type { OutboundSmsStatus } from "../../db/schema/messages.js";
import { AppError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { CarrierHttpRequest, CarrierHttpResponse, CarrierSignals, CarrierWebhook, Refusal } from "../carrier.js";
import { type TwilioClient, twilioRequest } from "./rest.js";
import { requireTwilioSignature } from "./signature.js";
import { mapAnsweredBy, mapTwilioStatus } from "./status.js";
import { dialTwiml, emptyMessagingTwiml, hangupTwiml, refusalTwiml, relayTwiml, whisperTwiml } from "./twiml.js";
import { TWILIO_PATHS, twilioUrls } from "./urls.js";

interface Dependencies {
  config: TwilioConfig;
  client: TwilioClient;
  baseUrl: string;
  db: Database;
  logger: Logger;
  signals: () => CarrierSignals;
  /** What the other party of a recorded call hears first (RECORDING_NOTICE). */
  recordingNotice: string;
  /** How long a transfer rings the person. */
  transferTimeoutMs: number;
}

const SENTENCES: Record<Refusal, string> = {
  not_in_service: "The number you have dialed is not in service. Goodbye.",
  insufficient_balance: "This line cannot take calls right now. Please try again later. Goodbye.",
};

/** Twilio's message statuses that move a sent text on. */
const SMS_STATUS: Record<string, OutboundSmsStatus> = { sent: "sent", delivered: "delivered", undelivered: "undelivered", failed: "failed" };

const xml = (body: string): CarrierHttpResponse => ({ status: 200, contentType: "text/xml", body });
const NO_CONTENT: CarrierHttpResponse = { status: 204 };

/** One form field as a string (Twilio never repeats the fields it sends). */
function field(form: CarrierHttpRequest["form"], name: string, required = true): string {
  const value = form[name];
  const text = Array.isArray(value) ? value[0] : value;
  if (required && !text) throw new AppError("bad_request", `The Twilio request has no ${name}.`);
  return text ?? "";
}

/**
 * The webhooks Twilio calls: the voice webhook (an inbound call), status callbacks, and the
 * messaging webhook (an inbound text). Each checks Twilio's signature first, so an unsigned or
 * forged request is a 403 that does nothing, and that the request is for the service's account.
 */
export function twilioWebhooks(deps: Dependencies): CarrierWebhook[] {
  const urls = twilioUrls(deps.baseUrl);
  const authentic = (request: CarrierHttpRequest) => {
    requireTwilioSignature(deps.config.authToken, deps.baseUrl + request.url, request.headers, request.form);
    if (field(request.form, "AccountSid") !== deps.config.accountSid) throw new AppError("forbidden", "The request is for another Twilio account.");
  };

  /** An inbound call: answered with ConversationRelay for the number's agent, or a polite refusal. */
  async function voice(request: CarrierHttpRequest) {
    authentic(request);
    const decision = await deps
      .signals()
      .inboundCall({ to: field(request.form, "To"), from: field(request.form, "From"), carrierRef: field(request.form, "CallSid") });
    if (!decision.accepted) return xml(refusalTwiml(SENTENCES[decision.reason]));
    const call = (await loadCallById(deps.db, decision.callId))!;
    return xml(
      relayTwiml({
        socketUrl: urls.relayOf(call.callId),
        callId: call.callId,
        voiceId: call.voiceId,
        greeting: call.greeting,
        recordingNotice: call.record ? deps.recordingNotice : undefined,
        action: urls.connectOf(call.callId),
      }),
    );
  }

  /**
   * A status callback. Outbound calls name our call in the callback URL (signed with it), since
   * Twilio may report before its create answer gave us the CallSid; inbound calls are found by it.
   */
  async function status(request: CarrierHttpRequest) {
    authentic(request);
    const callSid = field(request.form, "CallSid");
    const report = mapTwilioStatus(request.form);
    if (!report) return NO_CONTENT;
    const named = new URL(request.url, "http://x").searchParams.get("call_id");
    let call: CallRow | undefined;
    if (named) {
      call = await loadCallById(deps.db, named);
      if (!call) return endUnrecorded(named, callSid, report.status);
      if (call.carrierRef !== null && call.carrierRef !== callSid) call = undefined;
    } else {
      [call] = await deps.db.select().from(calls).where(eq(calls.carrierRef, callSid));
    }
    if (!call) {
      deps.logger.info({ call_sid: callSid, call_id: named }, "status callback for a call the service does not have");
      return NO_CONTENT;
    }
    await deps.signals().callStatus(call.callId, report.status, report.endedBy, { durationSeconds: report.durationSeconds });
    return NO_CONTENT;
  }

  /**
   * A call this service started but no longer has: placing it failed here (Twilio's answer timed
   * out or was lost, so the client got a 502 and the queued call was dropped), yet Twilio did
   * place it. It is ended at Twilio at its first report, before the far phone is answered if it
   * can be, so nobody picks up a call that has no agent behind it.
   */
  async function endUnrecorded(callId: string, callSid: string, status: string) {
    if (status === "queued" || status === "ringing" || status === "in-progress") {
      const end = status === "in-progress" ? "completed" : "canceled";
      deps.logger.warn({ call_id: callId, call_sid: callSid }, "Twilio placed a call whose placement failed here; ending it at Twilio");
      await twilioRequest("the hang-up", () => deps.client.calls(callSid).update({ status: end })).catch((error: unknown) =>
        deps.logger.error(
          { err: error, call_id: callId, call_sid: callSid },
          "Twilio did not take the hang-up of a call the service does not have; end it in the Twilio console",
        ),
      );
    }
    return NO_CONTENT;
  }

  /** An inbound text; Twilio gets an empty answer whether it was taken or refused. */
  async function sms(request: CarrierHttpRequest) {
    authentic(request);
    const message = {
      to: field(request.form, "To"),
      from: field(request.form, "From"),
      text: field(request.form, "Body", false),
      carrierRef: field(request.form, "MessageSid"),
    };
    const decision = await deps.signals().inboundSms(message);
    if (!decision.accepted) deps.logger.info({ to: message.to, reason: decision.reason, message_sid: message.carrierRef }, "inbound text refused");
    return xml(emptyMessagingTwiml());
  }

  /** The call a callback names (`?call_id=`, signed with the URL), if it is still the call Twilio means. */
  async function namedCall(request: CarrierHttpRequest): Promise<CallRow | undefined> {
    const named = new URL(request.url, "http://x").searchParams.get("call_id");
    const call = named ? await loadCallById(deps.db, named) : undefined;
    const callSid = field(request.form, "CallSid");
    return call && (call.carrierRef === null || call.carrierRef === callSid) ? call : undefined;
  }

  /** Answering machine detection's verdict (AsyncAmdStatusCallback): `AnsweredBy`, mapped onto ours. */
  async function amd(request: CarrierHttpRequest) {
    authentic(request);
    const call = await namedCall(request);
    const answeredBy = mapAnsweredBy(field(request.form, "AnsweredBy"));
    if (call) await deps.signals().answeredBy(call.callId, answeredBy);
    return NO_CONTENT;
  }

  /** A recording's status callback: a completed recording is ready (its RecordingSid and RecordingDuration). */
  async function recording(request: CarrierHttpRequest) {
    authentic(request);
    const call = await namedCall(request);
    if (!call || field(request.form, "RecordingStatus") !== "completed") return NO_CONTENT;
    const duration = Number(field(request.form, "RecordingDuration", false));
    await deps.signals().recordingReady({
      callId: call.callId,
      carrierRef: field(request.form, "RecordingSid"),
      durationSeconds: Number.isInteger(duration) && duration >= 0 ? duration : 0,
    });
    return NO_CONTENT;
  }

  /**
   * A sent text's status callback (`MessageStatus`, `ErrorCode`), naming our text in its URL
   * (signed with it). Twilio's statuses before `sent` (accepted, scheduled, queued, sending)
   * change nothing here; `canceled` (a scheduled text) is not used by the service.
   */
  async function smsStatus(request: CarrierHttpRequest) {
    authentic(request);
    const messageId = new URL(request.url, "http://x").searchParams.get("message_id");
    const status = SMS_STATUS[field(request.form, "MessageStatus")];
    if (!messageId || !status) return NO_CONTENT;
    const errorCode = field(request.form, "ErrorCode", false) || undefined;
    await deps.signals().smsStatus({ messageId, carrierRef: field(request.form, "MessageSid"), status, errorCode });
    return NO_CONTENT;
  }

  /**
   * `<Connect action>`: the ConversationRelay session ended. For a transfer (our `end` carried
   * `handoffData` naming it, and the call is dialing) the answer dials the person; otherwise the
   * session ended with the call (an agent's hang-up, the caller gone), and the answer hangs up.
   */
  async function connect(request: CarrierHttpRequest) {
    authentic(request);
    const call = await namedCall(request);
    let handoff: { reason?: unknown } = {};
    try {
      handoff = JSON.parse(field(request.form, "HandoffData", false) || "{}") as { reason?: unknown };
    } catch {
      handoff = {};
    }
    if (!call || handoff.reason !== "transfer" || call.transferStatus !== "dialing" || !call.transferTo || call.status !== "in-progress") {
      return xml(hangupTwiml());
    }
    return xml(
      dialTwiml({
        to: call.transferTo,
        action: urls.transferDialOf(call.callId),
        // Twilio's <Dial timeout> is whole seconds, 5 to 600.
        timeoutSeconds: Math.min(600, Math.max(5, Math.round(deps.transferTimeoutMs / 1000))),
        statusCallback: urls.transferStatusOf(call.callId),
        whisperUrl: call.transferMode === "warm" ? urls.transferWhisperOf(call.callId) : undefined,
      }),
    );
  }

  /** `<Number statusCallback>`: the person's leg; `answered` (CallStatus in-progress) bridges the transfer. */
  async function transferStatus(request: CarrierHttpRequest) {
    authentic(request);
    const named = new URL(request.url, "http://x").searchParams.get("call_id");
    const call = named ? await loadCallById(deps.db, named) : undefined;
    if (call && field(request.form, "CallStatus") === "in-progress") await deps.signals().transferOutcome(call.callId, "answered");
    return NO_CONTENT;
  }

  /** `<Number url>`: the person answered a warm transfer; they hear the whisper, then the caller is bridged. */
  async function transferWhisper(request: CarrierHttpRequest) {
    authentic(request);
    const named = new URL(request.url, "http://x").searchParams.get("call_id");
    const call = named ? await loadCallById(deps.db, named) : undefined;
    return xml(whisperTwiml(call?.transferWhisper ?? null));
  }

  /**
   * `<Dial action>`: the dial is over. Bridged and ended (`completed`, `answered`): the call ends.
   * Nobody (`busy`, `no-answer`, `failed`, `canceled`): a warm transfer reconnects the caller to
   * ConversationRelay, and the new session's `setup` (its `transfer_failed` parameter) gives the
   * agent the turn that says why; a cold one is reported now, and the call ends with a sentence.
   */
  async function transferDial(request: CarrierHttpRequest) {
    authentic(request);
    const call = await namedCall(request);
    const dialStatus = field(request.form, "DialCallStatus", false);
    if (!call || TERMINAL_STATUSES.has(call.status) || field(request.form, "CallStatus", false) === "completed") return xml(hangupTwiml());
    if (dialStatus === "completed" || dialStatus === "answered") return xml(hangupTwiml());
    const reason = dialStatus === "busy" ? "busy" : dialStatus === "failed" ? "failed" : "no-answer";
    if (call.transferMode === "warm") {
      return xml(
        relayTwiml({
          socketUrl: urls.relayOf(call.callId),
          callId: call.callId,
          voiceId: call.voiceId,
          action: urls.connectOf(call.callId),
          parameters: { transfer_failed: reason },
        }),
      );
    }
    await deps.signals().transferOutcome(call.callId, reason);
    return xml(hangupTwiml("The person you were transferred to could not be reached. Goodbye."));
  }

  return [
    { path: TWILIO_PATHS.amd, handle: amd },
    { path: TWILIO_PATHS.recording, handle: recording },
    { path: TWILIO_PATHS.connect, handle: connect },
    { path: TWILIO_PATHS.transferDial, handle: transferDial },
    { path: TWILIO_PATHS.transferStatus, handle: transferStatus },
    { path: TWILIO_PATHS.transferWhisper, handle: transferWhisper },
    { path: TWILIO_PATHS.voice, handle: voice },
    { path: TWILIO_PATHS.status, handle: status },
    { path: TWILIO_PATHS.sms, handle: sms },
    { path: TWILIO_PATHS.smsStatus, handle: smsStatus },
  ];
}
