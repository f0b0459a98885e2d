import { randomBytes } from "node:crypto";

/** Every id prefix the service issues (DESIGN §3). */
export const ID_PREFIXES = [
  "acct", "key", "agt", "num", "call", "turn", "evt", "msg", "conv", "wh", "whd", "txn", "fb", "sess", "req", "pay",
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

// Crockford base32, lower case: ids sort as strings in creation order (ULID layout).
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
let lastMs = -1;
let lastRandom = 0n;

/**
 * A new prefixed id such as `agt_01jdz3k7q8m9x2v4b6n8p0r2t4`: 48 bits of milliseconds then 80
 * random bits. Ids made by one process in the same millisecond still increase, because the
 * random part is incremented instead of redrawn.
 */
export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    lastRandom = BigInt("0x" + randomBytes(10).toString("hex"));
  } else {
    lastRandom = (lastRandom + 1n) & ((1n << 80n) - 1n);
  }
  return `${prefix}_${encode(BigInt(lastMs), 10)}${encode(lastRandom, 16)}`;
}

function encode(value: bigint, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

/** True when value looks like an id this service issued with the given prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`).test(value);
}
