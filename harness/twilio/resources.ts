import type { TwilioOpenApi } from "./openapi.js";

/** RFC 2822 dates, as Twilio's JSON carries them: "Tue, 31 Aug 2010 20:36:28 +0000". */
export function rfc2822(date: Date): string {
  return date.toUTCString().replace("GMT", "+0000");
}

/** A North American number for display, as Twilio formats it: "(415) 555-0123". */
function formatted(phoneNumber: string): string {
  const m = /^\+1(\d{3})(\d{3})(\d{4})$/.exec(phoneNumber);
  return m ? `(${m[1]}) ${m[2]}-${m[3]}` : phoneNumber;
}

/** Every property the document gives a component, null unless set: the full shape Twilio answers with. */
function complete(api: TwilioOpenApi, component: string, values: Record<string, unknown>): Record<string, unknown> {
  return { ...Object.fromEntries(api.propertiesOf(component).map((name) => [name, null])), ...values };
}

export interface StandInNumber {
  sid: string;
  phoneNumber: string;
  voiceUrl: string | null;
  smsUrl: string | null;
  statusCallback: string | null;
  created: Date;
}

export interface StandInCallRecord {
  sid: string;
  from: string;
  to: string;
  direction: "inbound" | "outbound-api";
  status: string;
  created: Date;
  answeredAt: Date | null;
  endedAt: Date | null;
  phoneNumberSid: string | null;
}

export function numberResource(api: TwilioOpenApi, accountSid: string, n: StandInNumber) {
  return complete(api, "api.v2010.account.incoming_phone_number", {
    account_sid: accountSid,
    address_requirements: "none",
    api_version: "2010-04-01",
    beta: false,
    capabilities: { voice: true, sms: true, mms: true, fax: false },
    date_created: rfc2822(n.created),
    date_updated: rfc2822(new Date()),
    friendly_name: formatted(n.phoneNumber),
    phone_number: n.phoneNumber,
    origin: "twilio",
    sid: n.sid,
    sms_method: "POST",
    sms_url: n.smsUrl ?? "",
    status_callback: n.statusCallback ?? "",
    status_callback_method: "POST",
    voice_method: "POST",
    voice_url: n.voiceUrl ?? "",
    voice_caller_id_lookup: false,
    voice_receive_mode: "voice",
    emergency_status: "Inactive",
    emergency_address_status: "unregistered",
    sms_fallback_method: "POST",
    sms_fallback_url: "",
    voice_fallback_method: "POST",
    voice_fallback_url: "",
    status: "in-use",
    uri: `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers/${n.sid}.json`,
  });
}

export function availableResource(api: TwilioOpenApi, component: string, phoneNumber: string, country: string) {
  return complete(api, component, {
    friendly_name: formatted(phoneNumber),
    phone_number: phoneNumber,
    iso_country: country,
    address_requirements: "none",
    beta: false,
    capabilities: { voice: true, SMS: true, MMS: true },
  });
}

export function callResource(api: TwilioOpenApi, accountSid: string, c: StandInCallRecord) {
  const duration = c.answeredAt && c.endedAt ? String(Math.ceil((c.endedAt.getTime() - c.answeredAt.getTime()) / 1000)) : null;
  return complete(api, "api.v2010.account.call", {
    sid: c.sid,
    account_sid: accountSid,
    api_version: "2010-04-01",
    date_created: rfc2822(c.created),
    date_updated: rfc2822(new Date()),
    direction: c.direction,
    from: c.from,
    from_formatted: formatted(c.from),
    to: c.to,
    to_formatted: formatted(c.to),
    phone_number_sid: c.phoneNumberSid,
    status: c.status,
    start_time: c.answeredAt ? rfc2822(c.answeredAt) : null,
    end_time: c.endedAt ? rfc2822(c.endedAt) : null,
    duration,
    price_unit: "USD",
    queue_time: "0",
    uri: `/2010-04-01/Accounts/${accountSid}/Calls/${c.sid}.json`,
    subresource_uris: { notifications: `/2010-04-01/Accounts/${accountSid}/Calls/${c.sid}/Notifications.json` },
  });
}

/** A recording at the stand-in: of a call, started through `Calls/{CallSid}/Recordings`. */
export interface StandInRecording {
  sid: string;
  callSid: string;
  channels: number;
  status: "in-progress" | "completed";
  started: Date;
  duration: number | null;
  statusCallback: string | null;
  statusCallbackEvents: string[];
}

export function callRecordingResource(api: TwilioOpenApi, accountSid: string, r: StandInRecording) {
  return complete(api, "api.v2010.account.call.call_recording", {
    account_sid: accountSid,
    api_version: "2010-04-01",
    call_sid: r.callSid,
    date_created: rfc2822(r.started),
    date_updated: rfc2822(new Date()),
    start_time: rfc2822(r.started),
    duration: r.duration === null ? "-1" : String(r.duration),
    sid: r.sid,
    uri: `/2010-04-01/Accounts/${accountSid}/Calls/${r.callSid}/Recordings/${r.sid}.json`,
    status: r.status,
    channels: r.channels,
    source: "StartCallRecordingAPI",
    track: "both",
  });
}

export function accountResource(api: TwilioOpenApi, accountSid: string) {
  return complete(api, "api.v2010.account", {
    sid: accountSid,
    owner_account_sid: accountSid,
    friendly_name: "agentline stand-in",
    status: "active",
    type: "Full",
    date_created: rfc2822(new Date(Date.UTC(2024, 0, 1))),
    date_updated: rfc2822(new Date()),
    uri: `/2010-04-01/Accounts/${accountSid}.json`,
  });
}

/** A page of a list, in Twilio's envelope. */
export function page(uri: string, key: string, items: unknown[], pageSize: number) {
  return {
    [key]: items,
    end: Math.max(0, items.length - 1),
    first_page_uri: `${uri}?PageSize=${pageSize}&Page=0`,
    next_page_uri: null,
    page: 0,
    page_size: pageSize,
    previous_page_uri: null,
    start: 0,
    uri,
  };
}

/** Twilio's JSON error body. */
export function twilioError(status: number, code: number, message: string) {
  return { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
}

export interface StandInMessage {
  sid: string;
  from: string;
  to: string;
  body: string;
  status: string;
  statusCallback: string | null;
  created: Date;
  errorCode: number | null;
}

export function messageResource(api: TwilioOpenApi, accountSid: string, m: StandInMessage) {
  return complete(api, "api.v2010.account.message", {
    sid: m.sid,
    account_sid: accountSid,
    api_version: "2010-04-01",
    body: m.body,
    date_created: rfc2822(m.created),
    date_updated: rfc2822(new Date()),
    date_sent: null,
    direction: "outbound-api",
    error_code: m.errorCode,
    error_message: null,
    from: m.from,
    to: m.to,
    messaging_service_sid: null,
    num_media: "0",
    num_segments: "1",
    price: null,
    price_unit: "USD",
    status: m.status,
    uri: `/2010-04-01/Accounts/${accountSid}/Messages/${m.sid}.json`,
    subresource_uris: { media: `/2010-04-01/Accounts/${accountSid}/Messages/${m.sid}/Media.json` },
  });
}
