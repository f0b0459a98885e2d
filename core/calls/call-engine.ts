import type { AnsweredBy, CarrierSignals, EndedBy, SmsStatusReport, StatusReport, TransferOutcome } from "../carrier/carrier.js";
import type { Core } from "../context.js";
import type { CallStatus } from "../db/schema/calls.js";
import { receiveInboundSms } from "../messages/inbound-sms.js";
import { applySmsStatus } from "../messages/sms-status.js";
import { secondsSince } from "../metrics.js";
import { applyCallStatus } from "./call-status.js";
import { receiveInboundCall } from "./inbound-call.js";
import { applyRecordingReady } from "./recordings.js";
import { transferOutcome } from "./transfer.js";
import { cancelOpenTurn, claimFiller, openTurn } from "./turns.js";
import { applyAnsweredBy } from "./voicemail.js";

/**
 * What the carrier reports, applied to the domain; and the per-turn timers that speak a filler
 * when a turn waits too long for its answer. A timer lives in the process that opened the turn;
 * the filler itself is claimed in the database, so it is spoken at most once. A call has at most
 * one open turn, so timers are kept by call, and dropped once their turn closes here, sparing a
 * claim that could only find the turn closed.
 */
export class LiveCallEngine implements CarrierSignals {
  private readonly fillerTimers = new Map<string, { turnId: string; timer: NodeJS.Timeout }>();

  constructor(private readonly core: Core) {}

  inboundCall(call: { to: string; from: string; carrierRef: string }) {
    return receiveInboundCall(this.core, call);
  }

  async callStatus(callId: string, status: CallStatus, endedBy?: EndedBy, report: StatusReport = {}): Promise<void> {
    await applyCallStatus(this.core, callId, status, endedBy, { durationSeconds: report.durationSeconds });
  }

  async callerUtterance(callId: string, text: string, input: "speech" | "dtmf" = "speech") {
    const started = performance.now();
    const turn = await openTurn(this.core, callId, text, input);
    this.core.metrics.turnLeg.observe({ leg: "utterance" }, secondsSince(started));
    if (!turn.amended) this.scheduleFiller(callId, turn.turnId);
    return { turnId: turn.turnId };
  }

  async callerInterrupted(callId: string): Promise<void> {
    const turnId = await cancelOpenTurn(this.core, callId);
    if (turnId) this.turnClosed(callId, turnId);
  }

  /** The call's turn closed (answered, cancelled, or the call ended): its filler is not needed. */
  turnClosed(callId: string, turnId?: string): void {
    const pending = this.fillerTimers.get(callId);
    if (!pending || (turnId !== undefined && pending.turnId !== turnId)) return;
    clearTimeout(pending.timer);
    this.fillerTimers.delete(callId);
  }

  answeredBy(callId: string, answeredBy: AnsweredBy): Promise<void> {
    return applyAnsweredBy(this.core, callId, answeredBy);
  }

  recordingReady(recording: { callId: string; carrierRef: string; durationSeconds: number }): Promise<void> {
    return applyRecordingReady(this.core, recording);
  }

  transferOutcome(callId: string, outcome: TransferOutcome): Promise<void> {
    return transferOutcome(this.core, callId, outcome);
  }

  inboundSms(message: { to: string; from: string; text: string; carrierRef: string }) {
    return receiveInboundSms(this.core, message);
  }

  async smsStatus(report: SmsStatusReport): Promise<void> {
    await applySmsStatus(this.core, report);
  }

  private scheduleFiller(callId: string, turnId: string): void {
    // A new turn makes the previous one stale, so its filler could never be spoken.
    this.turnClosed(callId);
    const timer = setTimeout(() => {
      this.fillerTimers.delete(callId);
      claimFiller(this.core, callId, turnId)
        .then((text) => (text ? this.core.carrier.speak(callId, { text, final: false, turnId }) : undefined))
        .catch((error) => this.core.logger.error({ err: error, call_id: callId, turn_id: turnId }, "filler failed"));
    }, this.core.config.turnTimeoutMs);
    timer.unref();
    this.fillerTimers.set(callId, { turnId, timer });
  }

  close(): void {
    for (const { timer } of this.fillerTimers.values()) clearTimeout(timer);
    this.fillerTimers.clear();
  }
}
