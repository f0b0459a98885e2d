import type { Bus } from "../../bus.js";
import { loadCall } from "../../calls/call-records.js";
import { CALL_STATUS_CHANNEL } from "../../calls/call-status.js";
import { MAX_SPOKEN_TEXT, TERMINAL_STATUSES } from "../../calls/schemas.js";
import { CALL_TRANSFER_CHANNEL } from "../../calls/transfer.js";
import type { Database } from "../../db/database.js";
import { AppError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { readClientFrame } from "../../schemas/client-frames.js";
import { SocketsByKey } from "../../sockets-by-key.js";
import type { CarrierSocket, CarrierSocketEndpoint, CarrierSocketSession, FarParty, Speech } from "../carrier.js";

/** The bus channel carrying what the agent says into sandbox calls, to softphones in any process. */
export const SANDBOX_SPEECH_CHANNEL = "sandbox.speech";

/** The bus channel carrying the keypad tones the agent plays into sandbox calls. */
export const SANDBOX_DIGITS_CHANNEL = "sandbox.digits";

/** A line the far party hears, as published on SANDBOX_SPEECH_CHANNEL. */
export interface SandboxSpeech {
  call_id: string;
  text: string;
  final: boolean;
  turn_id: string | null;
}

/** What a softphone client may send. */
type ClientFrame = { type: "say"; text: string } | { type: "dtmf"; digits: string } | { type: "interrupt" } | { type: "hangup" };

function parseFrame(frame: Record<string, unknown>): ClientFrame | string {
  switch (frame.type) {
    case "say":
      return typeof frame.text === "string" && frame.text.trim() !== "" && frame.text.length <= MAX_SPOKEN_TEXT
        ? { type: "say", text: frame.text.trim() }
        : `say needs text (1 to ${MAX_SPOKEN_TEXT} characters)`;
    case "dtmf":
      return typeof frame.digits === "string" && /^[0-9*#]{1,32}$/.test(frame.digits)
        ? { type: "dtmf", digits: frame.digits }
        : "dtmf needs digits (0-9, * and #)";
    case "interrupt":
    case "hangup":
      return { type: frame.type };
    default:
      return "type must be say, dtmf, interrupt or hangup";
  }
}

interface Dependencies {
  db: Database;
  bus: Bus;
  logger: Logger;
  farParty: FarParty;
}

/**
 * The sandbox softphones of this process. A softphone, `/v1/sandbox/calls/{call_id}/ws`, is the
 * far party of one of the account's calls, live: the server sends `{type:"status",status}` now
 * and on every change, `{type:"speech",text,final,turn_id}` for every line the agent speaks (the
 * call's greeting first, with `turn_id: null`, once the call is answered: the sandbox's
 * ConversationRelay `welcomeGreeting`, played to each softphone that picks up), and
 * `{type:"digits",digits}` for keypad tones the agent plays; the client sends `say`, `dtmf`,
 * `interrupt` and `hangup`. The socket closes (1000) when the
 * call ends. One bus subscription per channel serves them all, through a map by call.
 */
export class Softphones {
  private readonly phones = new SocketsByKey<Softphone>();
  private readonly unsubscribe: Array<() => void>;

  constructor(private readonly deps: Dependencies) {
    this.unsubscribe = [
      deps.bus.subscribe(SANDBOX_SPEECH_CHANNEL, (m) =>
        this.phones.each(m.call_id, (phone) => phone.send({ type: "speech", text: m.text, final: m.final, turn_id: m.turn_id })),
      ),
      deps.bus.subscribe(CALL_STATUS_CHANNEL, (m) => this.phones.each(m.call_id, (phone) => phone.status(String(m.status)))),
      deps.bus.subscribe(SANDBOX_DIGITS_CHANNEL, (m) => this.phones.each(m.call_id, (phone) => phone.send({ type: "digits", digits: m.digits }))),
      deps.bus.subscribe(CALL_TRANSFER_CHANNEL, (m) => this.phones.each(m.call_id, (phone) => phone.transfer(m))),
    ];
  }

  /** The socket endpoint the gateway serves, to a client holding one of the call's account's credentials. */
  endpoint(): CarrierSocketEndpoint {
    return {
      name: "softphone",
      pattern: /^\/v1\/sandbox\/calls\/([^/]+)\/ws$/,
      maxFrameBytes: 64 * 1024,
      openedBy: "account",
      accept: async ({ accountId, captured }) => {
        const callId = decodeURIComponent(captured[0]!);
        const call = await loadCall(this.deps.db, accountId, callId).catch(() => {
          throw new AppError("not_found", `No call with id ${JSON.stringify(callId)} exists on this account.`);
        });
        return new Softphone(this, callId, call.status, call.greeting);
      },
    };
  }

  /**
   * To the call's softphone: from memory when it is in this process (no hop through the
   * database), else through the bus to the others.
   */
  async speak(callId: string, speech: Speech): Promise<void> {
    const message: SandboxSpeech = { call_id: callId, text: speech.text, final: speech.final, turn_id: speech.turnId };
    if (this.phones.has(callId)) this.deps.bus.announce(SANDBOX_SPEECH_CHANNEL, { ...message });
    else await this.deps.bus.publish(SANDBOX_SPEECH_CHANNEL, { ...message }, { othersOnly: true });
  }

  /** Keypad tones to the call's softphone, wherever it is open (as `speak`). */
  async sendDigits(callId: string, digits: string): Promise<void> {
    const message = { call_id: callId, digits };
    if (this.phones.has(callId)) this.deps.bus.announce(SANDBOX_DIGITS_CHANNEL, { ...message });
    else await this.deps.bus.publish(SANDBOX_DIGITS_CHANNEL, { ...message }, { othersOnly: true });
  }

  /** Counts an open softphone in; returns its removal. */
  track(phone: Softphone): () => void {
    return this.phones.track(phone.callId, phone);
  }

  get farParty(): FarParty {
    return this.deps.farParty;
  }

  get logger(): Logger {
    return this.deps.logger;
  }

  close(): void {
    this.unsubscribe.forEach((off) => off());
  }
}

/** One open softphone: the far party of one call. */
class Softphone implements CarrierSocketSession {
  private socket: CarrierSocket | undefined;
  private untrack: (() => void) | undefined;
  private greeted = false;
  /** The call's transfer as last announced: while dialing or bridged, the caller is not with the agent. */
  private transferState: string | undefined;

  constructor(
    private readonly phones: Softphones,
    readonly callId: string,
    private readonly statusAtOpen: string,
    private readonly greeting: string | null,
  ) {}

  opened(socket: CarrierSocket): void {
    this.socket = socket;
    this.untrack = this.phones.track(this);
    this.status(this.statusAtOpen);
  }

  closed(): void {
    this.untrack?.();
  }

  send(frame: Record<string, unknown>): void {
    this.socket?.send(JSON.stringify(frame));
  }

  /** The call's status, now or on a change; the socket closes (1000) once the call has ended. */
  status(status: string): void {
    this.send({ type: "status", status });
    if (status === "in-progress" && this.greeting && !this.greeted) {
      this.greeted = true;
      this.send({ type: "speech", text: this.greeting, final: true, turn_id: null });
    }
    if (TERMINAL_STATUSES.has(status)) this.socket?.close(1000, "call ended");
  }

  /** A transfer moved: `{type:"transfer", status: dialing|whisper|answered|failed, to_number, mode?, reason?, text?}`. */
  transfer(change: Record<string, unknown>): void {
    const { call_id: _, ...frame } = change;
    if (change.status !== "whisper") this.transferState = String(change.status);
    this.send({ type: "transfer", ...frame });
  }

  message(data: string): void {
    const { callId } = this;
    const read = readClientFrame(data);
    if ("error" in read) return this.send(read.error);
    const frame = parseFrame(read.frame);
    if (typeof frame === "string") return this.send({ type: "error", code: "validation_error", message: frame });
    if ((frame.type === "say" || frame.type === "dtmf") && (this.transferState === "dialing" || this.transferState === "answered")) {
      return this.send({ type: "error", code: "transfer_in_progress", message: "The call is being transferred: the agent does not hear the caller." });
    }
    // The call was checked to be the account's at the upgrade: frames act on it directly.
    const act = async () => {
      const party = this.phones.farParty;
      if (frame.type === "say") this.send({ type: "said", turn_id: (await party.say(callId, frame.text)).turnId });
      else if (frame.type === "dtmf") this.send({ type: "said", turn_id: (await party.pressKeys(callId, frame.digits)).turnId });
      else if (frame.type === "interrupt") await party.interrupt(callId);
      else await party.hangup(callId);
    };
    act().catch((error: unknown) => {
      if (error instanceof AppError) this.send({ type: "error", code: error.code, message: error.detail });
      else this.phones.logger.error({ err: error, call_id: callId }, "softphone frame failed");
    });
  }
}
