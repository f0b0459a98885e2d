import twilio from "twilio";
import { AppError } from "../../errors.js";

/**
 * Refuses (403) a request that Twilio did not sign: `X-Twilio-Signature` must be the HMAC-SHA1,
 * keyed with the auth token, of the exact public URL Twilio requested plus the sorted POST
 * parameters, checked with the SDK's `validateRequest`. Called before anything else is done, so
 * a refused request has no effect at all.
 */
export function requireTwilioSignature(
  authToken: string,
  publicUrl: string,
  headers: Record<string, string | string[] | undefined>,
  params: Record<string, unknown>,
): void {
  const header = headers["x-twilio-signature"];
  const signature = Array.isArray(header) ? header[0] : header;
  if (!signature) throw new AppError("forbidden", "This endpoint is for Twilio: the X-Twilio-Signature header is missing.");
  if (!twilio.validateRequest(authToken, signature, publicUrl, params)) {
    throw new AppError("forbidden", "This endpoint is for Twilio: the X-Twilio-Signature header does not match the request.");
  }
}
