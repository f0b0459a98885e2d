import { randomBytes } from "node:crypto";
import type { Bus } from "../../bus.js";
import type { CallStatus } from "../../db/schema/calls.js";
import { CarrierRefusal, type Carrier, type CarrierSignals, type NumberRequest, type Speech } from "../carrier.js";
import { sandboxBlock, shuffledNumbers } from "./numbers.js";

/** The bus channel carrying what the agent says into sandbox calls, to softphones in any process. */
export const SANDBOX_SPEECH_CHANNEL = "sandbox.speech";

/** A line the far party hears, as published on SANDBOX_SPEECH_CHANNEL. */
export interface SandboxSpeech {
  call_id: string;
  text: string;
  final: boolean;
  turn_id: string | null;
}

/**
 * What an outbound sandbox call does, by the last four digits of the number dialled: 0001 is
 * busy, 0002 does not answer, 0003 fails, 0004 rings until hung up; anything else answers at once.
 */
export function sandboxOutcome(toNumber: string): CallStatus | null {
  switch (toNumber.slice(-4)) {
    case "0001":
      return "busy";
    case "0002":
      return "no-answer";
    case "0003":
      return "failed";
    case "0004":
      return null;
    default:
      return "in-progress";
  }
}

/**
 * A carrier with no telephone company behind it: fictional numbers, outcomes by the number
 * dialled, and a far party driven by the sandbox routes and the softphone WebSocket. Everything
 * the agent says is published on the bus so a softphone connected to any process hears it.
 */
export class SandboxCarrier implements Carrier {
  readonly name = "sandbox";
  private signals: CarrierSignals | undefined;
  /** Softphones open in this process, by call. */
  private readonly softphones = new Map<string, number>();

  constructor(private readonly bus: Bus) {}

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

  async placeCall(call: { callId: string; to: string }) {
    // Like a telephone company: the call rings, then the outcome arrives as a status report.
    await this.reporting.callStatus(call.callId, "ringing");
    const outcome = sandboxOutcome(call.to);
    if (outcome) await this.reporting.callStatus(call.callId, outcome, outcome === "in-progress" ? undefined : "carrier");
    return { carrierRef: `SBCA${randomBytes(8).toString("hex")}` };
  }

  // The service records the end of a call itself before asking the carrier to hang up.
  async hangupCall(): Promise<void> {}

  /**
   * A softphone of the call opened in this process; returns its close. While one is open, what
   * is spoken into the call goes to it from memory, with no hop through the database.
   */
  softphoneOpened(callId: string): () => void {
    this.softphones.set(callId, (this.softphones.get(callId) ?? 0) + 1);
    return () => {
      const left = (this.softphones.get(callId) ?? 1) - 1;
      if (left > 0) this.softphones.set(callId, left);
      else this.softphones.delete(callId);
    };
  }

  /** To the call's softphone: from memory when it is in this process, else through the bus to the others. */
  async speak(callId: string, speech: Speech): Promise<void> {
    const message: SandboxSpeech = { call_id: callId, text: speech.text, final: speech.final, turn_id: speech.turnId };
    if (this.softphones.has(callId)) this.bus.announce(SANDBOX_SPEECH_CHANNEL, { ...message });
    else await this.bus.publish(SANDBOX_SPEECH_CHANNEL, { ...message }, { othersOnly: true });
  }

  async close(): Promise<void> {}

  /** The far party of sandbox calls: what a caller or callee does. */
  readonly farParty = {
    say: (callId: string, text: string) => this.reporting.callerUtterance(callId, text, "speech"),
    pressKeys: (callId: string, digits: string) => this.reporting.callerUtterance(callId, digits, "dtmf"),
    interrupt: (callId: string) => this.reporting.callerInterrupted(callId),
    hangup: (callId: string) => this.reporting.callStatus(callId, "completed", "caller"),
  };

  /** A call arriving from the outside world on one of the service's numbers. */
  ringInbound(call: { to: string; from: string }) {
    return this.reporting.inboundCall({ ...call, carrierRef: `SBCA${randomBytes(8).toString("hex")}` });
  }

  /** A text arriving from the outside world on one of the service's numbers. */
  deliverSms(message: { to: string; from: string; text: string }) {
    return this.reporting.inboundSms({ ...message, carrierRef: `SBSM${randomBytes(8).toString("hex")}` });
  }
}
