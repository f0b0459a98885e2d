import { createHmac } from "node:crypto";

/**
 * The key Standard Webhooks signs with: a `whsec_` secret is base64 after its prefix (what the
 * `standardwebhooks` library expects); any other secret is used as its raw bytes (verify with
 * `new Webhook(secret, { format: "raw" })`).
 */
function standardKey(secret: string): Buffer {
  return secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret, "utf8");
}

const GITHUB_HEADER = "x-hub-signature-256";

/**
 * The headers that let a receiver verify a delivery: the service's own header (lowercase hex
 * HMAC-SHA256 of the raw body, keyed with the secret as written; `sha256=<hex>` under GitHub's
 * X-Hub-Signature-256, as GitHub sends it) and the Standard Webhooks
 * trio (`webhook-id`, `webhook-timestamp`, `webhook-signature`), which also lets a receiver
 * reject replays by their timestamp.
 */
export function signatureHeaders(options: {
  secret: string;
  signatureHeader: string;
  messageId: string;
  body: string;
  timestamp: Date;
}): Record<string, string> {
  const { secret, signatureHeader, messageId, body } = options;
  const seconds = Math.floor(options.timestamp.getTime() / 1000);
  const standard = createHmac("sha256", standardKey(secret)).update(`${messageId}.${seconds}.${body}`).digest("base64");
  const hex = createHmac("sha256", secret).update(body).digest("hex");
  return {
    // Under GitHub's header name, GitHub's format (what its verifiers expect); elsewhere the spec's bare hex.
    [signatureHeader]: signatureHeader.toLowerCase() === GITHUB_HEADER ? `sha256=${hex}` : hex,
    "webhook-id": messageId,
    "webhook-timestamp": String(seconds),
    "webhook-signature": `v1,${standard}`,
  };
}
