import { z } from "zod";
import { invalid, required } from "./errors.js";
import type { ServerSettings } from "./server.js";
import { httpUrl, isLoopbackHost } from "./values.js";

/** The carrier's settings, each with its documentation (docs/configuration.md is generated from them). */
export const carrierSettings = z
  .object({
    CARRIER: z.enum(["sandbox", "twilio"], { error: "expected sandbox or twilio" }).default("sandbox").meta({
      description: "Telephone carrier: `sandbox` (fictional numbers, scripted far party) or `twilio` (real calls and texts; see [operating.md](operating.md)).",
    }),
    TWILIO_ACCOUNT_SID: z
      .string()
      .regex(/^AC[0-9a-fA-F]{32}$/, "expected AC followed by 32 hexadecimal digits")
      .optional()
      .meta({ description: "`CARRIER=twilio`: the account (`AC` + 32 hex digits)." }),
    // Needed even with an API key: it is what Twilio signs its webhooks with.
    TWILIO_AUTH_TOKEN: z
      .string()
      .regex(/^[0-9a-fA-F]{32}$/, "expected 32 hexadecimal digits (the account's auth token)")
      .optional()
      .meta({
        secret: true,
        description: "`CARRIER=twilio`: the account's auth token. Checks Twilio's signatures; also the REST password unless an API key is set.",
      }),
    TWILIO_API_KEY_SID: z
      .string()
      .regex(/^SK[0-9a-fA-F]{32}$/, "expected SK followed by 32 hexadecimal digits")
      .optional()
      .meta({
        description: "`CARRIER=twilio`, optional (with `TWILIO_API_KEY_SECRET`, or neither): an API key (`SK...`) for REST calls instead of the auth token.",
      }),
    TWILIO_API_KEY_SECRET: z
      .string()
      .regex(/^[0-9A-Za-z]{16,64}$/, "expected the API key's secret (16 to 64 letters and digits)")
      .optional()
      .meta({ secret: true, description: "The secret of `TWILIO_API_KEY_SID` (both or neither)." }),
    TWILIO_API_URL: httpUrl.default("https://api.twilio.com").meta({ description: "Twilio's REST API (the tests point it at a loopback stand-in)." }),
    TWILIO_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(8_000).meta({
      description: "How long one Twilio REST request may take before the answer is 502 `carrier_unavailable`.",
    }),
    TRANSFER_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000).meta({
      description:
        "How long a transferred call rings the person before the transfer fails as `no-answer` (Twilio's `<Dial timeout>`, in whole seconds, at least 5).",
    }),
  })
  .meta({
    title: "Carrier",
    description: "The telephone network: the built-in sandbox, or Twilio (Programmable Voice with ConversationRelay).",
  });

export type CarrierSettings = z.output<typeof carrierSettings>;

/** The carrier's part of Config. */
export function carrierConfig(e: CarrierSettings & Pick<ServerSettings, "BASE_URL">) {
  return {
    carrier: e.CARRIER,
    transferTimeoutMs: e.TRANSFER_TIMEOUT_MS,
    /** Set exactly when `carrier` is `twilio`. */
    twilio: e.CARRIER === "twilio" ? twilioConfig(e) : undefined,
  };
}

/**
 * CARRIER=twilio: the credentials, and a public BASE_URL that Twilio can reach and sign (https;
 * plain http is allowed only for a loopback host, which only a local stand-in can call).
 */
function twilioConfig(e: CarrierSettings & Pick<ServerSettings, "BASE_URL">) {
  if (!e.TWILIO_ACCOUNT_SID) throw required("TWILIO_ACCOUNT_SID", "with CARRIER=twilio");
  if (!e.TWILIO_AUTH_TOKEN) throw required("TWILIO_AUTH_TOKEN", "with CARRIER=twilio (it checks Twilio's signatures, even with an API key)");
  if (e.TWILIO_API_KEY_SID && !e.TWILIO_API_KEY_SECRET) throw required("TWILIO_API_KEY_SECRET", "with TWILIO_API_KEY_SID");
  if (e.TWILIO_API_KEY_SECRET && !e.TWILIO_API_KEY_SID) throw required("TWILIO_API_KEY_SID", "with TWILIO_API_KEY_SECRET");
  if (!e.BASE_URL) throw required("BASE_URL", "with CARRIER=twilio (the public https URL Twilio calls back)");
  const base = new URL(e.BASE_URL);
  if (base.protocol !== "https:" && !isLoopbackHost(base.hostname)) {
    throw invalid("BASE_URL", e.BASE_URL, "must be https with CARRIER=twilio (http only for a loopback host)", { secret: false });
  }
  if (base.search || base.hash) throw invalid("BASE_URL", e.BASE_URL, "must not carry a query or fragment", { secret: false });
  return {
    accountSid: e.TWILIO_ACCOUNT_SID,
    authToken: e.TWILIO_AUTH_TOKEN,
    /** REST credentials other than the auth token (both or neither). */
    apiKey: e.TWILIO_API_KEY_SID ? { sid: e.TWILIO_API_KEY_SID, secret: e.TWILIO_API_KEY_SECRET! } : undefined,
    /** Twilio's REST API (a loopback stand-in in tests), no trailing slash. */
    apiUrl: e.TWILIO_API_URL.replace(/\/+$/, ""),
    timeoutMs: e.TWILIO_TIMEOUT_MS,
  };
}

/** What the Twilio carrier needs: REST credentials, the key its signatures are checked with, where its API is. */
export type TwilioConfig = ReturnType<typeof twilioConfig>;
