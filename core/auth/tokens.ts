import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `prefix` + 32 random bytes in base62 (43 characters): API keys, agent tokens, push tokens. */
export function randomToken(prefix: string): string {
  let n = BigInt("0x" + randomBytes(32).toString("hex"));
  let out = "";
  for (let i = 0; i < 43; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return prefix + out;
}

/** SHA-256 hex of a token: how tokens are stored and looked up. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** HMAC-SHA256 hex. */
export function hmacHex(key: Buffer, data: string): string {
  return createHmac("sha256", key).update(data).digest("hex");
}

/** Constant-time equality of two hex or text strings. */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
