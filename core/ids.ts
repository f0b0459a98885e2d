import { randomBytes } from "node:crypto";

/** Every id prefix the service issues. */
export const ID_PREFIXES = [
  "acct",
  "key",
  "atk",
  "agt",
  "num",
  "call",
  "turn",
  "evt",
  "msg",
  "conv",
  "wh",
  "whd",
  "txn",
  "fb",
  "sess",
  "req",
  "pay",
  "conn",
  "rec",
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

// Crockford base32, lower case: ids sort as strings in creation order (ULID layout).
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const HALF = 2 ** 40;
let lastMs = -1;
// The 80 random bits as two 40-bit halves: plain numbers, exact in a double, where BigInt
// arithmetic allocated on every id (one per request, several per live turn).
let high = 0;
let low = 0;

/**
 * A new prefixed id such as `agt_01jdz3k7q8m9x2v4b6n8p0r2t4`: 48 bits of milliseconds then 80
 * random bits. Ids made by one process in the same millisecond still increase, because the
 * random part is incremented instead of redrawn.
 */
export function newId(prefix: IdPrefix): string {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    const random = randomBytes(10);
    high = random.readUIntBE(0, 5);
    low = random.readUIntBE(5, 5);
  } else if (++low === HALF) {
    low = 0;
    high = (high + 1) % HALF;
  }
  return `${prefix}_${encode(lastMs, 10)}${encode(high, 8)}${encode(low, 8)}`;
}

/** The low 5×length bits of a non-negative integer below 2^53, in `length` base-32 digits. */
function encode(value: number, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) {
    out = ALPHABET[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

/** True when value looks like an id this service issued with the given prefix. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`).test(value);
}
