import type { TwilioConfig } from "../../config.js";
import { createTwilioClient, twilioRequest } from "./rest.js";
import { twilioUrls } from "./urls.js";

/** What `agentline admin carrier-check` reports for the Twilio carrier. */
export interface TwilioCheckReport {
  ok: boolean;
  carrier: "twilio";
  api_url: string;
  /** Which credentials the REST calls use. */
  credentials: "auth_token" | "api_key";
  account?: { sid: string; friendly_name: string | null; status: string | null; type: string | null };
  /** The URLs Twilio will call: BASE_URL must make them reachable from the internet. */
  webhooks: { voice_url: string; sms_url: string; status_callback: string; conversation_relay: string };
  /** Numbers in the Twilio account (first 50), and whether each already points at this service. */
  numbers?: Array<{ phone_number: string; points_here: boolean }>;
  error?: string;
}

/**
 * Checks the Twilio setup the way the service will use it: the credentials fetch the account,
 * the account's numbers can be listed, and these are the webhook URLs Twilio will be given.
 */
export async function checkTwilio(config: TwilioConfig, baseUrl: string): Promise<TwilioCheckReport> {
  const urls = twilioUrls(baseUrl);
  const report: TwilioCheckReport = {
    ok: false,
    carrier: "twilio",
    api_url: config.apiUrl,
    credentials: config.apiKey ? "api_key" : "auth_token",
    webhooks: {
      voice_url: urls.voice,
      sms_url: urls.sms,
      status_callback: urls.status,
      conversation_relay: urls.relayOf("{call_id}").replace("%7Bcall_id%7D", "{call_id}"),
    },
  };
  const client = createTwilioClient(config);
  try {
    const account = await twilioRequest("the account lookup", () => client.api.v2010.accounts(config.accountSid).fetch());
    report.account = { sid: account.sid, friendly_name: account.friendlyName, status: account.status, type: account.type };
    const numbers = await twilioRequest("the number list", () => client.incomingPhoneNumbers.list({ limit: 50 }));
    report.numbers = numbers.map((n) => ({ phone_number: n.phoneNumber, points_here: n.voiceUrl === urls.voice && n.smsUrl === urls.sms }));
    report.ok = account.status === "active";
    if (!report.ok) report.error = `the Twilio account is ${account.status}, not active`;
  } catch (error) {
    report.error = (error as Error).message;
  }
  return report;
}
