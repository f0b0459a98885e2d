import { createHmac, randomBytes } from "node:crypto";

/**
 * `X-Twilio-Signature` exactly as Twilio documents it ("Validating requests are coming from
 * Twilio"): take the full URL Twilio requested, append each POST parameter's name and value
 * sorted by name, HMAC-SHA1 that with the auth token, and Base64 the digest. Written here from
 * the documentation (not with the SDK), so the service's check is tested against an independent one.
 */
export function twilioSignature(authToken: string, url: string, params: Record<string, string> = {}): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, name) => acc + name + params[name], url);
  return createHmac("sha1", authToken).update(Buffer.from(data, "utf8")).digest("base64");
}

/** A Twilio resource id: two letters and 32 hexadecimal digits (34 characters). */
export function twilioSid(prefix: "AC" | "CA" | "PN" | "SM" | "VX" | "SK" | "RE"): string {
  return prefix + randomBytes(16).toString("hex");
}
