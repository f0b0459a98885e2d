import { WebhookVerificationError } from "./errors.js";
import type { AgentlineEvent } from "./events.js";

export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** The header the webhook was set up with. Default: X-Webhook-Signature, else X-Hub-Signature-256. */
  signatureHeader?: string;
  /** Oldest Standard Webhooks timestamp accepted, in seconds either way. Default 300. */
  toleranceSeconds?: number;
  now?: Date;
}

const encoder = new TextEncoder();

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return Array.isArray(value) ? value[0] : value;
  return undefined;
}

function hexBytes(hex: string): Uint8Array | undefined {
  if (!/^([0-9a-f]{2})+$/i.test(hex)) return undefined;
  return Uint8Array.from(hex.match(/../g)!, (pair) => parseInt(pair, 16));
}

function base64Bytes(text: string): Uint8Array | undefined {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** HMAC-SHA256 check in constant time (WebCrypto's verify), so it runs in Node, Deno, Bun and workers. */
async function hmacMatches(key: Uint8Array, data: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  return crypto.subtle.verify("HMAC", cryptoKey, signature, data);
}

/**
 * Verifies a webhook delivery and returns its event. Pass the raw body exactly as received (not
 * re-serialized JSON). With the Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) those are checked, timestamp included (replays are refused); otherwise the
 * service's own header: hex HMAC-SHA256 of the body, bare or as `sha256=<hex>` (GitHub's form).
 * Throws WebhookVerificationError when nothing verifies.
 */
export async function verifyWebhook(rawBody: string | Uint8Array, headers: HeadersLike, secret: string, options: VerifyOptions = {}): Promise<AgentlineEvent> {
  const body = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody;
  const standard = header(headers, "webhook-signature");
  if (standard !== undefined) await verifyStandard(body, headers, standard, secret, options);
  else await verifyHex(body, headers, secret, options);
  try {
    return JSON.parse(new TextDecoder().decode(body)) as AgentlineEvent;
  } catch {
    throw new WebhookVerificationError("the body is not JSON");
  }
}

async function verifyStandard(body: Uint8Array, headers: HeadersLike, signatures: string, secret: string, options: VerifyOptions): Promise<void> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  if (!id || !timestamp || !/^\d+$/.test(timestamp)) throw new WebhookVerificationError("webhook-id and webhook-timestamp must accompany webhook-signature");
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300))
    throw new WebhookVerificationError("webhook-timestamp is too old or too new (a replay?)");
  // A whsec_ secret is base64 after its prefix; any other secret signs as its own bytes.
  const key = secret.startsWith("whsec_") ? base64Bytes(secret.slice(6)) : encoder.encode(secret);
  if (!key) throw new WebhookVerificationError("the whsec_ secret is not base64");
  const signed = new Uint8Array([...encoder.encode(`${id}.${timestamp}.`), ...body]);
  for (const entry of signatures.split(" ")) {
    const [version, value] = entry.split(",", 2);
    const signature = version === "v1" && value ? base64Bytes(value) : undefined;
    if (signature && (await hmacMatches(key, signed, signature))) return;
  }
  throw new WebhookVerificationError("no webhook-signature matches the body");
}

async function verifyHex(body: Uint8Array, headers: HeadersLike, secret: string, options: VerifyOptions): Promise<void> {
  const names = options.signatureHeader ? [options.signatureHeader] : ["x-webhook-signature", "x-hub-signature-256"];
  const value = names.map((name) => header(headers, name)).find((v) => v !== undefined);
  if (value === undefined) throw new WebhookVerificationError(`no signature: expected ${names.join(" or ")}, or the Standard Webhooks headers`);
  const signature = hexBytes(value.trim().replace(/^sha256=/, ""));
  if (!signature || !(await hmacMatches(encoder.encode(secret), body, signature))) throw new WebhookVerificationError("the signature does not match the body");
}
