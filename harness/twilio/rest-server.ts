import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parse as parseQuery } from "node:querystring";
import { liveStandIns } from "./live-stand-ins.js";
import { type MatchedOperation, TwilioOpenApi } from "./openapi.js";
import {
  accountResource,
  availableResource,
  callRecordingResource,
  callResource,
  messageResource,
  numberResource,
  page,
  type StandInCallRecord,
  type StandInMessage,
  type StandInNumber,
  type StandInRecording,
  twilioError,
} from "./resources.js";
import { twilioSid } from "./signing.js";

/**
 * What the stand-in does to the next requests of one operation instead of answering them:
 * `hang` never answers (nothing done), `lost-answer` does the work and then never answers (Twilio
 * bought the number or placed the call, but its answer was lost), or an error answer.
 */
export type Fault = "hang" | "lost-answer" | { status: number; code: number; message: string };

/** A REST request the stand-in received, validated against Twilio's document. */
export interface LoggedRequest {
  operationId: string;
  params: Record<string, string>;
  query: Record<string, string | string[]>;
  form: Record<string, string | string[]>;
}

/** A call at the stand-in, with what the service asked of it. */
export interface StandInCall extends StandInCallRecord {
  twiml: string | null;
  statusCallback: string | null;
  statusCallbackEvents: string[];
  /** Answering machine detection asked for (`MachineDetection`), and where its async verdict goes. */
  machineDetection: string | null;
  asyncAmdStatusCallback: string | null;
}

const AVAILABLE_KIND: Record<string, string> = {
  ListAvailablePhoneNumberLocal: "api.v2010.account.available_phone_number_country.available_phone_number_local",
  ListAvailablePhoneNumberTollFree: "api.v2010.account.available_phone_number_country.available_phone_number_toll_free",
  ListAvailablePhoneNumberMobile: "api.v2010.account.available_phone_number_country.available_phone_number_mobile",
};

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

/**
 * The REST half of the Twilio stand-in: a loopback HTTP server answering the subset of the 2010
 * API the adapter uses, with Basic auth as Twilio checks it, every request validated against
 * Twilio's own OpenAPI document (an invalid one is recorded as a violation and answered 400),
 * Twilio's resource shapes and JSON errors, and faults on demand (an error, or no answer at all).
 */
export class TwilioRest {
  readonly api = new TwilioOpenApi();
  readonly requests: LoggedRequest[] = [];
  readonly violations: string[] = [];
  readonly numbers = new Map<string, StandInNumber>();
  readonly calls = new Map<string, StandInCall>();
  readonly recordings = new Map<string, StandInRecording>();
  /** Texts the service sent, by MessageSid. */
  readonly messages = new Map<string, StandInMessage>();
  /**
   * Senders who texted STOP to one of the account's numbers (`number|sender`): as Twilio's default
   * opt-out handling does, a text from that number to them is refused with 21610 until START.
   */
  readonly optedOut = new Set<string>();
  url = "";
  private server: Server | undefined;
  private readonly faults = new Map<string, Fault[]>();
  private readonly hanging = new Set<ServerResponse>();
  private readonly sold = new Set<string>();
  private readonly unreported: string[] = [];

  constructor(
    readonly accountSid: string,
    readonly authToken: string,
    readonly apiKey: { sid: string; secret: string } | undefined,
  ) {}

  async listen(): Promise<void> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    liveStandIns.add(this);
  }

  /** The violations recorded since the last call (fail-fast.ts fails the test that caused them). */
  takeNewViolations(): string[] {
    return this.unreported.splice(0);
  }

  /** The next `times` requests of an operation get the fault instead of being served. */
  fail(operationId: string, fault: Fault, times = 1): void {
    this.faults.set(operationId, [...(this.faults.get(operationId) ?? []), ...Array<Fault>(times).fill(fault)]);
  }

  /** Puts a number in the account (bought elsewhere, not pointed at the service). */
  ownNumber(phoneNumber: string): StandInNumber {
    const n: StandInNumber = { sid: twilioSid("PN"), phoneNumber, voiceUrl: null, smsUrl: null, statusCallback: null, created: new Date() };
    this.numbers.set(n.sid, n);
    this.sold.add(phoneNumber);
    return n;
  }

  /** Requests of one operation, oldest first. */
  requestsOf(operationId: string): LoggedRequest[] {
    return this.requests.filter((r) => r.operationId === operationId);
  }

  async close(): Promise<void> {
    liveStandIns.delete(this);
    for (const res of this.hanging) res.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://x");
    const query = parseQuery(url.search.slice(1)) as Record<string, string | string[]>;
    const form = chunks.length > 0 ? (parseQuery(Buffer.concat(chunks).toString("utf8")) as Record<string, string | string[]>) : {};
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, body === undefined ? {} : { "content-type": "application/json" });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    // A recording's media (`.wav`) is not a JSON operation of the document: served here, authenticated like the rest.
    const media = /^\/2010-04-01\/Accounts\/([^/]+)\/Recordings\/(RE[0-9a-f]{32})\.wav$/.exec(url.pathname);
    if (media && req.method === "GET") return this.serveMedia(req, res, media[1]!, media[2]!);
    const checked = this.api.check({ method: req.method ?? "GET", path: url.pathname, query, form });
    if ("problems" in checked) {
      this.violated(`${req.method} ${url.pathname}: ${checked.problems.join("; ")}`);
      return send(400, twilioError(400, 20001, `stand-in: the request does not match Twilio's OpenAPI: ${checked.problems.join("; ")}`));
    }
    if (!this.authorised(req.headers.authorization)) return send(401, twilioError(401, 20003, "Authenticate"));
    const pathAccount = checked.params.AccountSid ?? checked.params.Sid;
    if (pathAccount !== this.accountSid) return send(404, twilioError(404, 20404, `The requested resource ${url.pathname} was not found`));
    this.requests.push({ operationId: checked.operationId, params: checked.params, query, form });
    const fault = this.faults.get(checked.operationId)?.shift();
    if (fault === "hang") {
      this.hanging.add(res);
      return;
    }
    if (fault && fault !== "lost-answer") return send(fault.status, twilioError(fault.status, fault.code, fault.message));
    const [status, body] = this.handle(checked, query, form);
    if (fault === "lost-answer") {
      this.hanging.add(res);
      return;
    }
    try {
      if (status < 300) this.api.checkResponse(checked, req.method!, status, body);
    } catch (error) {
      this.violated(String(error));
      return send(500, twilioError(500, 20500, "stand-in: its own answer does not match Twilio's document"));
    }
    send(status, body);
  }

  protected violated(problem: string): void {
    this.violations.push(problem);
    this.unreported.push(problem);
  }

  private authorised(header: string | undefined): boolean {
    const [scheme, encoded] = (header ?? "").split(" ");
    if (scheme !== "Basic" || !encoded) return false;
    const [user, password] = Buffer.from(encoded, "base64").toString("utf8").split(":");
    return (
      (user === this.accountSid && password === this.authToken) || (this.apiKey !== undefined && user === this.apiKey.sid && password === this.apiKey.secret)
    );
  }

  private handle(op: MatchedOperation, query: Record<string, string | string[]>, form: Record<string, string | string[]>): [number, unknown] {
    const base = `/2010-04-01/Accounts/${this.accountSid}`;
    const pageSize = Number(first(query.PageSize) ?? 50);
    switch (op.operationId) {
      case "FetchAccount":
        return [200, accountResource(this.api, this.accountSid)];
      case "ListAvailablePhoneNumberLocal":
      case "ListAvailablePhoneNumberTollFree":
      case "ListAvailablePhoneNumberMobile": {
        const offered = this.offer(op.params.CountryCode!, op.operationId, first(query.AreaCode));
        if (offered === null) return [404, twilioError(404, 20404, "The requested resource was not found")];
        const found = offered.slice(0, pageSize);
        const kind = op.template.split("/").at(-1)!;
        return [
          200,
          page(
            `${base}/AvailablePhoneNumbers/${op.params.CountryCode}/${kind}`,
            "available_phone_numbers",
            found.map((n) => availableResource(this.api, AVAILABLE_KIND[op.operationId]!, n, op.params.CountryCode!)),
            pageSize,
          ),
        ];
      }
      case "CreateIncomingPhoneNumber": {
        const phoneNumber = first(form.PhoneNumber);
        if (!phoneNumber) return [400, twilioError(400, 21452, "No phone numbers found")];
        if (this.sold.has(phoneNumber)) return [400, twilioError(400, 21422, `Phone number ${phoneNumber} is not available`)];
        this.sold.add(phoneNumber);
        const n: StandInNumber = { sid: twilioSid("PN"), phoneNumber, voiceUrl: null, smsUrl: null, statusCallback: null, created: new Date() };
        this.configure(n, form);
        this.numbers.set(n.sid, n);
        return [201, numberResource(this.api, this.accountSid, n)];
      }
      case "ListIncomingPhoneNumber": {
        const wanted = first(query.PhoneNumber);
        const held = [...this.numbers.values()].filter((n) => !wanted || n.phoneNumber === wanted);
        return [
          200,
          page(
            `${base}/IncomingPhoneNumbers.json`,
            "incoming_phone_numbers",
            held.map((n) => numberResource(this.api, this.accountSid, n)),
            pageSize,
          ),
        ];
      }
      case "UpdateIncomingPhoneNumber":
      case "DeleteIncomingPhoneNumber": {
        const n = this.numbers.get(op.params.Sid!);
        if (!n) return [404, twilioError(404, 20404, `The requested resource ${base}/IncomingPhoneNumbers/${op.params.Sid}.json was not found`)];
        if (op.operationId === "DeleteIncomingPhoneNumber") {
          this.numbers.delete(n.sid);
          return [204, undefined];
        }
        this.configure(n, form);
        return [200, numberResource(this.api, this.accountSid, n)];
      }
      case "CreateCall":
        return this.createCall(form);
      case "CreateMessage":
        return this.createMessage(form);
      case "FetchCall":
      case "UpdateCall": {
        const call = this.calls.get(op.params.Sid!);
        if (!call) return [404, twilioError(404, 20404, `The requested resource ${base}/Calls/${op.params.Sid}.json was not found`)];
        if (op.operationId === "UpdateCall") this.updated(call, first(form.Status));
        return [200, callResource(this.api, this.accountSid, call)];
      }
      case "CreateCallRecording":
        return this.startRecording(op.params.CallSid!, form);
      case "DeleteRecording": {
        const recording = this.recordings.get(op.params.Sid!);
        if (!recording) return [404, twilioError(404, 20404, `The requested resource ${base}/Recordings/${op.params.Sid}.json was not found`)];
        this.recordings.delete(recording.sid);
        return [204, undefined];
      }
      default:
        return [404, twilioError(404, 20404, `the stand-in does not serve ${op.operationId}`)];
    }
  }

  private configure(n: StandInNumber, form: Record<string, string | string[]>): void {
    n.voiceUrl = first(form.VoiceUrl) ?? n.voiceUrl;
    n.smsUrl = first(form.SmsUrl) ?? n.smsUrl;
    n.statusCallback = first(form.StatusCallback) ?? n.statusCallback;
  }

  /** Fictional numbers to offer (555-01xx), or null for a country Twilio does not serve. */
  private offer(country: string, operationId: string, areaCode: string | undefined): string[] | null {
    const block =
      country === "US" || country === "CA"
        ? operationId.endsWith("TollFree")
          ? `+1${areaCode ?? "888"}55501`
          : `+1${areaCode ?? "415"}55501`
        : country === "GB"
          ? operationId.endsWith("Mobile")
            ? "+4477009001"
            : "+4420794601"
          : null;
    if (!block) return null;
    // Like Twilio, a search answers varied numbers, not the same first ones every time.
    const free = Array.from({ length: 100 }, (_, i) => block + String(i).padStart(2, "0")).filter((n) => !this.sold.has(n));
    return free
      .map((n) => ({ n, key: Math.random() }))
      .sort((x, y) => x.key - y.key)
      .map(({ n }) => n);
  }

  private createCall(form: Record<string, string | string[]>): [number, unknown] {
    const to = first(form.To)!;
    // Twilio's answer for a destination it cannot dial: the stand-in treats 555-0999 as one.
    if (to.endsWith("5550999")) return [400, twilioError(400, 21211, `The 'To' number ${to} is not a valid phone number.`)];
    const from = first(form.From)!;
    const owned = [...this.numbers.values()].find((n) => n.phoneNumber === from);
    if (!owned) return [400, twilioError(400, 21210, `The source phone number provided, ${from}, is not yet verified for your account.`)];
    const events = form.StatusCallbackEvent;
    // Twilio's documented values, which its OpenAPI leaves as free strings.
    const machineDetection = first(form.MachineDetection) ?? null;
    if (machineDetection !== null && machineDetection !== "Enable" && machineDetection !== "DetectMessageEnd") {
      this.violated(`CreateCall: MachineDetection ${machineDetection} is neither Enable nor DetectMessageEnd`);
    }
    const asyncAmd = first(form.AsyncAmd);
    if (asyncAmd !== undefined && asyncAmd !== "true" && asyncAmd !== "false") this.violated(`CreateCall: AsyncAmd ${asyncAmd} is neither true nor false`);
    if (asyncAmd === "true" && !first(form.AsyncAmdStatusCallback)) this.violated("CreateCall: AsyncAmd true without AsyncAmdStatusCallback");
    const call: StandInCall = {
      sid: twilioSid("CA"),
      from,
      to,
      direction: "outbound-api",
      status: "queued",
      created: new Date(),
      answeredAt: null,
      endedAt: null,
      phoneNumberSid: null,
      twiml: first(form.Twiml) ?? null,
      statusCallback: first(form.StatusCallback) ?? null,
      statusCallbackEvents: Array.isArray(events) ? events : events ? [events] : ["completed"],
      machineDetection,
      asyncAmdStatusCallback: asyncAmd === "true" ? (first(form.AsyncAmdStatusCallback) ?? null) : null,
    };
    this.calls.set(call.sid, call);
    return [201, callResource(this.api, this.accountSid, call)];
  }

  /** `Calls/{CallSid}/Recordings` create: only a call in progress can be recorded (Twilio's 21220 otherwise). */
  private startRecording(callSid: string, form: Record<string, string | string[]>): [number, unknown] {
    const call = this.calls.get(callSid);
    if (!call) return [404, twilioError(404, 20404, `The requested resource /Calls/${callSid} was not found`)];
    if (call.status !== "in-progress") return [400, twilioError(400, 21220, "Requested resource is not eligible for recording")];
    const channels = first(form.RecordingChannels) ?? "mono";
    if (channels !== "mono" && channels !== "dual") this.violated(`CreateCallRecording: RecordingChannels ${channels} is neither mono nor dual`);
    const events = form.RecordingStatusCallbackEvent;
    const recording: StandInRecording = {
      sid: twilioSid("RE"),
      callSid,
      channels: channels === "dual" ? 2 : 1,
      status: "in-progress",
      started: new Date(),
      duration: null,
      statusCallback: first(form.RecordingStatusCallback) ?? null,
      statusCallbackEvents: (Array.isArray(events) ? events : events ? [events] : ["completed"]).flatMap((e) => e.split(" ")),
    };
    this.recordings.set(recording.sid, recording);
    return [201, callRecordingResource(this.api, this.accountSid, recording)];
  }

  /** A recording's audio, as Twilio serves `{uri}.wav`: a small WAV (mono 8 kHz PCM silence, one second). */
  private serveMedia(req: IncomingMessage, res: ServerResponse, accountSid: string, sid: string): void {
    this.requests.push({ operationId: "FetchRecordingMedia", params: { AccountSid: accountSid, Sid: sid }, query: {}, form: {} });
    const fail = (status: number, code: number, message: string) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(twilioError(status, code, message)));
    };
    if (!this.authorised(req.headers.authorization)) return fail(401, 20003, "Authenticate");
    const recording = this.recordings.get(sid);
    if (accountSid !== this.accountSid || !recording || recording.status !== "completed") return fail(404, 20404, "The requested resource was not found");
    const wav = standInWav(1);
    res.writeHead(200, { "content-type": "audio/x-wav", "content-length": String(wav.length) });
    res.end(wav);
  }

  private createMessage(form: Record<string, string | string[]>): [number, unknown] {
    const to = first(form.To)!;
    const from = first(form.From);
    if (to.endsWith("5550999")) return [400, twilioError(400, 21211, `The 'To' number ${to} is not a valid phone number.`)];
    if (!from || ![...this.numbers.values()].some((n) => n.phoneNumber === from)) {
      return [400, twilioError(400, 21606, `The From phone number ${from} is not a valid, SMS-capable inbound phone number or short code for your account.`)];
    }
    if (this.optedOut.has(`${from}|${to}`)) return [400, twilioError(400, 21610, "Attempt to send to unsubscribed recipient")];
    const message: StandInMessage = {
      sid: twilioSid("SM"),
      from,
      to,
      body: first(form.Body) ?? "",
      status: "queued",
      statusCallback: first(form.StatusCallback) ?? null,
      created: new Date(),
      errorCode: null,
    };
    this.messages.set(message.sid, message);
    return [201, messageResource(this.api, this.accountSid, message)];
  }

  /** `Calls` update with `Status`: overridden by the telephony half, which ends the call. */
  protected updated(call: StandInCall, status: string | undefined): void {
    void call;
    void status;
  }
}

/** A mono 8 kHz 16-bit PCM WAV of silence. */
export function standInWav(seconds: number): Buffer {
  const data = seconds * 8000 * 2;
  const wav = Buffer.alloc(44 + data);
  wav.write("RIFF", 0, "ascii");
  wav.writeUInt32LE(36 + data, 4);
  wav.write("WAVEfmt ", 8, "ascii");
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(8000, 24);
  wav.writeUInt32LE(16000, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write("data", 36, "ascii");
  wav.writeUInt32LE(data, 40);
  return wav;
}
