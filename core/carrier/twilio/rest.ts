import twilio from "twilio";
import type { TwilioConfig } from "../../config.js";
import { CarrierRefusal, CarrierUnavailable } from "../carrier.js";

/** The SDK's REST client, as the adapter uses it. */
export type TwilioClient = ReturnType<typeof twilio>;

/**
 * The official SDK's client, authenticated with the API key when one is set (else the auth
 * token), with a bounded timeout, talking to `apiUrl`: the SDK builds every 2010 API URL from its
 * `api` domain's base URL, so pointing that one property at TWILIO_API_URL moves the whole REST
 * surface the adapter uses (a loopback stand-in in tests) without touching how requests are made.
 */
export function createTwilioClient(config: TwilioConfig): TwilioClient {
  const client = config.apiKey
    ? twilio(config.apiKey.sid, config.apiKey.secret, { accountSid: config.accountSid, timeout: config.timeoutMs, autoRetry: false })
    : twilio(config.accountSid, config.authToken, { timeout: config.timeoutMs, autoRetry: false });
  client.api.baseUrl = config.apiUrl;
  return client;
}

/** Twilio error codes that mean the number dialled cannot be called: the client's `to_number`. */
const INVALID_TO = new Set([
  13223, // Dial: invalid phone number format
  13224, // Dial: invalid phone number
  13225, // Dial: forbidden phone number
  21211, // invalid 'To' phone number
  21214, // 'To' phone number cannot be reached
  21215, // geographic permission: not allowed to call this destination
  21216, // 'To' phone number is blocked
  21217, // phone number is not a valid number
  21401, // invalid phone number
  21408, // permission to send an SMS to this region has not been enabled
  21612, // 'To' phone number is not currently reachable
]);

/** Twilio's "attempt to send to unsubscribed recipient": the recipient texted STOP to the sender. */
const OPTED_OUT = 21610;

/** Codes meaning a number the service relies on is no longer in the Twilio account or for sale. */
const NUMBER_GONE = new Set([
  21210, // 'From' phone number not verified / not in the account
  21212, // invalid 'From' phone number
  21422, // phone number is not available (to buy)
  21606, // 'From' phone number is not a valid, SMS-capable inbound number for the account
]);

/** Codes meaning the request needs something the account does not have for that country. */
const REGULATORY = new Set([
  21404, // trial accounts cannot buy this
  21421, // phone number is invalid
  21450, // address required
  21631, // address required for this number type
  21649, // bundle required
]);

function isRestException(error: unknown): error is { status: number; code?: number; message: string } {
  return error instanceof twilio.RestException;
}

/**
 * Runs one REST request and turns Twilio's failures into the carrier port's: a refusal the
 * client can act on (`CarrierRefusal`, a 4xx naming a field: `fields.to` is the number dialled,
 * for an uncallable destination; `fields.number` the field a gone or unavailable number blames),
 * or Twilio unavailable (`CarrierUnavailable`: unreachable, timed out, 5xx, rate limited,
 * refusing the service's credentials, or refusing a request the service built).
 */
export async function twilioRequest<T>(label: string, request: () => Promise<T>, fields: { to?: string; number?: string } = {}): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw translate(label, error, fields);
  }
}

function translate(label: string, error: unknown, fields: { to?: string; number?: string }): Error {
  if (!isRestException(error)) {
    // Network failures and timeouts come from the HTTP client (axios) with a code, not a status.
    const code = (error as { code?: string }).code;
    return new CarrierUnavailable(`Twilio did not answer ${label}${code ? ` (${code})` : ""}`, { cause: error });
  }
  const twilioCode = error.code ?? 0;
  const said = `Twilio ${twilioCode || error.status}: ${error.message}`;
  if (error.status >= 500 || error.status === 429 || error.status === 401 || error.status === 403 || twilioCode === 20003) {
    return new CarrierUnavailable(`Twilio failed ${label} (${said})`, { cause: error });
  }
  if (twilioCode === OPTED_OUT && fields.to) return new CarrierRefusal("recipient_opted_out", `${fields.to} has opted out at Twilio (${said})`, "to_number");
  if (INVALID_TO.has(twilioCode) && fields.to) return new CarrierRefusal("invalid_number", `${fields.to} cannot be called (${said})`, "to_number");
  if (NUMBER_GONE.has(twilioCode)) return new CarrierRefusal("number_unavailable", `the number is no longer available at Twilio (${said})`, fields.number);
  if (REGULATORY.has(twilioCode)) return new CarrierRefusal("unsupported", `Twilio cannot provide it to this account (${said})`, fields.number ?? "country");
  // Any other refusal is Twilio rejecting a request the service built: nothing the client can fix.
  return new CarrierUnavailable(`Twilio refused ${label} (${said})`, { cause: error });
}

/** True when the request failed because the resource does not exist at Twilio (a 404). */
export function isNotFoundAtTwilio(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return isRestException(cause) && cause.status === 404;
}

/**
 * True when a failed request may still have been carried out at Twilio: no answer came (a
 * timeout, a dropped connection) or Twilio failed on its side (5xx). A 4xx answer means Twilio
 * did nothing.
 */
export function mayHaveGoneThrough(error: unknown): boolean {
  if (!(error instanceof CarrierUnavailable)) return false;
  const cause = error.cause;
  return !isRestException(cause) || cause.status >= 500;
}
