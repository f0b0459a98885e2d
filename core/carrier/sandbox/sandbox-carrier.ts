import { randomBytes } from "node:crypto";
import type { Bus } from "../../bus.js";
import { CALL_TRANSFER_CHANNEL } from "../../calls/transfer.js";
import type { CallStatus } from "../../db/schema/calls.js";
import type { Logger } from "../../logger.js";
import {
  type CallExtras,
  type CallTransfer,
  type Carrier,
  type CarrierEndpoints,
  CarrierRefusal,
  type CarrierSignals,
  type FarParty,
  type NumberRequest,
  type OutboundSms,
  type RecordingAudio,
  type Speech,
  type TransferOutcome,
} from "../carrier.js";
import type { CarrierDependencies } from "../carrier-kind.js";
import { sandboxBlock, shuffledNumbers } from "./numbers.js";
import { SandboxRecorder } from "./recorder.js";
import { Softphones } from "./softphone.js";

/**
 * What an outbound sandbox call does, by the last four digits of the number dialled: 0001 is
 * busy, 0002 does not answer, 0003 fails, 0005 rings until hung up; anything else answers at once
 * (0004 is answered by a voicemail box: see `sandboxAnswerer`).
 */
export function sandboxOutcome(toNumber: string): CallStatus | null {
  switch (toNumber.slice(-4)) {
    case "0001":
      return "busy";
    case "0002":
      return "no-answer";
    case "0003":
      return "failed";
    case "0005":
      return null;
    default:
      return "in-progress";
  }
}

/** Who answers an answered sandbox call: a number ending 0004 is a voicemail box, any other a person. */
export function sandboxAnswerer(toNumber: string): "human" | "machine" {
  return toNumber.endsWith("0004") ? "machine" : "human";
}

/**
 * How a sandbox transfer goes, by the last four digits of the person's number: 0001 is busy, 0002
 * does not answer (the transfer timeout runs out), 0003 fails; anything else answers.
 */
export function sandboxTransferOutcome(toNumber: string): TransferOutcome {
  switch (toNumber.slice(-4)) {
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
 * A carrier with no telephone company behind it: fictional numbers, outcomes by the number
 * dialled, and a far party the client plays, through the sandbox routes and its softphone socket.
 * Everything the agent says goes to the call's softphone, in whichever process it is open.
 */
export class SandboxCarrier implements Carrier {
  readonly name = "sandbox";
  readonly endpoints: CarrierEndpoints;
  /** The far party of sandbox calls: what a caller or callee does. */
  readonly farParty: FarParty;
  private signals: CarrierSignals | undefined;
  private readonly softphones: Softphones;
  private readonly recorder = new SandboxRecorder();
  private readonly transferTimers = new Set<NodeJS.Timeout>();
  private readonly bus: Bus;
  private readonly logger: Logger;
  private readonly transferTimeoutMs: number;

  constructor(deps: CarrierDependencies & { transferTimeoutMs?: number }) {
    this.bus = deps.bus;
    this.logger = deps.logger;
    this.transferTimeoutMs = deps.transferTimeoutMs ?? 30_000;
    this.farParty = {
      ringInbound: async (call) => {
        const decision = await this.reporting.inboundCall({ ...call, carrierRef: `SBCA${randomBytes(8).toString("hex")}` });
        if (decision.accepted && decision.recordingNotice) await this.startRecording(decision.callId, decision.recordingNotice);
        return decision;
      },
      deliverSms: (message) => this.reporting.inboundSms({ ...message, carrierRef: `SBSM${randomBytes(8).toString("hex")}` }),
      say: (callId, text) => this.reporting.callerUtterance(callId, text, "speech"),
      pressKeys: (callId, digits) => this.reporting.callerUtterance(callId, digits, "dtmf"),
      interrupt: (callId) => this.reporting.callerInterrupted(callId),
      hangup: async (callId) => {
        await this.reporting.callStatus(callId, "completed", "caller");
        await this.finishRecording(callId);
      },
    };
    this.softphones = new Softphones({ ...deps, farParty: this.farParty });
    this.endpoints = { webhooks: [], sockets: [this.softphones.endpoint()] };
  }

  start(signals: CarrierSignals): void {
    this.signals = signals;
  }

  private get reporting(): CarrierSignals {
    if (!this.signals) throw new Error("sandbox carrier used before start()");
    return this.signals;
  }

  async buyNumber(request: NumberRequest, isTaken: (phoneNumber: string) => Promise<boolean>) {
    const block = sandboxBlock(request);
    for (const phoneNumber of shuffledNumbers(block)) {
      if (!(await isTaken(phoneNumber))) return { phoneNumber, carrierRef: `SBPN${randomBytes(8).toString("hex")}` };
    }
    throw new CarrierRefusal("no_numbers_available", `every sandbox number in ${block.prefix}${"x".repeat(block.digits)} is taken; choose another area code`);
  }

  async attachNumber(phoneNumber: string) {
    return { carrierRef: `SBPN-attached-${phoneNumber}` };
  }

  async releaseNumber(): Promise<void> {}

  async placeCall(call: { callId: string; to: string } & CallExtras) {
    // Like a telephone company: the call rings, then the outcome arrives as a status report.
    await this.reporting.callStatus(call.callId, "ringing");
    const outcome = sandboxOutcome(call.to);
    if (outcome) await this.reporting.callStatus(call.callId, outcome, outcome === "in-progress" ? undefined : "carrier");
    if (outcome === "in-progress") {
      // The notice first, then the recording; machine detection reports once the greeting (or the beep) is over.
      if (call.recordingNotice) await this.startRecording(call.callId, call.recordingNotice);
      if (call.machineDetection) await this.reporting.answeredBy(call.callId, sandboxAnswerer(call.to));
    }
    return { carrierRef: `SBCA${randomBytes(8).toString("hex")}` };
  }

  // The service records the end of a call itself before asking the carrier to hang up.
  async dropCall(call: { callId: string }): Promise<void> {
    await this.finishRecording(call.callId);
  }

  fetchRecording(recording: { carrierRef: string; durationSeconds: number }): Promise<RecordingAudio> {
    return this.recorder.audio(recording);
  }

  async deleteRecording(recording: { carrierRef: string }): Promise<void> {
    this.recorder.delete(recording.carrierRef);
  }

  /** Says the recording notice to the far party, then starts recording. */
  private async startRecording(callId: string, notice: string): Promise<void> {
    await this.softphones.speak(callId, { text: notice, final: true, turnId: null });
    this.recorder.start(callId);
  }

  /** The call ended: its recording, if it had one, is finished and reported. */
  private async finishRecording(callId: string): Promise<void> {
    const done = this.recorder.stop(callId);
    if (done) await this.reporting.recordingReady({ callId, ...done });
  }

  speak(callId: string, speech: Speech): Promise<void> {
    return this.softphones.speak(callId, speech);
  }

  sendDigits(callId: string, digits: string): Promise<void> {
    return this.softphones.sendDigits(callId, digits);
  }

  /**
   * A text is delivered at once (sent, then delivered), except to a number ending 0003, where it
   * fails (error 30003, unreachable handset, as Twilio reports it).
   */
  async sendSms(message: OutboundSms) {
    const carrierRef = `SBSM${randomBytes(8).toString("hex")}`;
    const report = { messageId: message.messageId, carrierRef };
    if (message.to.endsWith("0003")) {
      await this.reporting.smsStatus({ ...report, status: "failed", errorCode: "30003" });
    } else {
      await this.reporting.smsStatus({ ...report, status: "sent" });
      await this.reporting.smsStatus({ ...report, status: "delivered" });
    }
    return { carrierRef };
  }

  /**
   * Dials the person as a telephone company would, reporting after the request returns: busy and
   * failed at once, no answer when the transfer timeout runs out, else the person answers (a warm
   * transfer's whisper is what they hear first: the softphone sees it as a `transfer` frame with
   * status `whisper`). A cold transfer that finds nobody ends the call, as the network would.
   */
  async transferCall(transfer: CallTransfer): Promise<void> {
    const outcome = sandboxTransferOutcome(transfer.to);
    const report = async () => {
      if (outcome === "answered" && transfer.mode === "warm" && transfer.whisper) {
        await this.bus.publish(CALL_TRANSFER_CHANNEL, { call_id: transfer.callId, status: "whisper", to_number: transfer.to, text: transfer.whisper });
      }
      await this.reporting.transferOutcome(transfer.callId, outcome);
      if (outcome !== "answered" && transfer.mode === "cold") await this.reporting.callStatus(transfer.callId, "completed", "carrier");
    };
    const timer = setTimeout(
      () => {
        this.transferTimers.delete(timer);
        report().catch((error: unknown) => this.logger.error({ err: error, call_id: transfer.callId }, "sandbox transfer report failed"));
      },
      outcome === "no-answer" ? this.transferTimeoutMs : 0,
    );
    timer.unref();
    this.transferTimers.add(timer);
  }

  async close(): Promise<void> {
    for (const timer of this.transferTimers) clearTimeout(timer);
    this.transferTimers.clear();
    this.softphones.close();
  }
}
