/**
 * How many parts (segments) a text is sent as, counted as carriers count them (3GPP TS 23.038
 * and 23.040). A text written wholly in the GSM-7 alphabet travels in 7-bit septets: 160 in one
 * part, or 153 per part when it is split (the rest of each part carries the header that joins
 * them); a character of the extension table (`^{}\[~]|€` and form feed) takes two septets, an
 * escape and the character, and the two never go to different parts. Any other character makes
 * the whole text UCS-2: 70 UTF-16 code units in one part, 67 per part when split, and a
 * surrogate pair (an emoji, say) is never split between parts.
 */

const GSM7_BASIC = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
const GSM7_EXTENSION = "\f^{}\\[~]|€";

const BASIC = new Set(GSM7_BASIC);
const EXTENSION = new Set(GSM7_EXTENSION);

export type SmsEncoding = "GSM-7" | "UCS-2";

export interface SegmentCount {
  encoding: SmsEncoding;
  segments: number;
}

/** The units each character takes: septets for GSM-7, UTF-16 code units for UCS-2. */
function units(text: string): { encoding: SmsEncoding; sizes: number[] } {
  const chars = [...text]; // by code point: a surrogate pair stays one character
  if (chars.every((c) => BASIC.has(c) || EXTENSION.has(c))) return { encoding: "GSM-7", sizes: chars.map((c) => (EXTENSION.has(c) ? 2 : 1)) };
  return { encoding: "UCS-2", sizes: chars.map((c) => c.length) };
}

/** Counts the segments of a text (an empty text is one empty part). */
export function countSegments(text: string): SegmentCount {
  const { encoding, sizes } = units(text);
  const single = encoding === "GSM-7" ? 160 : 70;
  const perPart = encoding === "GSM-7" ? 153 : 67;
  const total = sizes.reduce((sum, n) => sum + n, 0);
  if (total <= single) return { encoding, segments: 1 };
  // Packed part by part, so a two-unit character that does not fit starts the next part.
  let segments = 1;
  let used = 0;
  for (const size of sizes) {
    if (used + size > perPart) {
      segments++;
      used = 0;
    }
    used += size;
  }
  return { encoding, segments };
}
