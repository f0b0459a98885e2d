import { describe, expect, it } from "vitest";
import { countSegments } from "./segments.js";

describe("countSegments", () => {
  it("GSM-7: 160 septets in one part, then 153 per part", () => {
    expect(countSegments("")).toEqual({ encoding: "GSM-7", segments: 1 });
    expect(countSegments("a".repeat(160))).toEqual({ encoding: "GSM-7", segments: 1 });
    expect(countSegments("a".repeat(161))).toEqual({ encoding: "GSM-7", segments: 2 });
    expect(countSegments("a".repeat(306))).toEqual({ encoding: "GSM-7", segments: 2 });
    expect(countSegments("a".repeat(307))).toEqual({ encoding: "GSM-7", segments: 3 });
    expect(countSegments("a".repeat(1600)).segments).toBe(11);
  });

  it("GSM-7's own letters (£, é, Δ, newline) stay GSM-7", () => {
    expect(countSegments("Café £5 Δ\nÄÖÜ ¿¡ @ _ §")).toEqual({ encoding: "GSM-7", segments: 1 });
    expect(countSegments("é".repeat(160)).segments).toBe(1);
  });

  it("extension characters count two septets", () => {
    expect(countSegments("€".repeat(80))).toEqual({ encoding: "GSM-7", segments: 1 });
    expect(countSegments(`${"€".repeat(80)}a`)).toEqual({ encoding: "GSM-7", segments: 2 });
    expect(countSegments("{}[]~|^\\".repeat(10)).segments).toBe(1);
    expect(countSegments(`${"a".repeat(159)}^`).segments).toBe(2);
  });

  it("an extension character never straddles two parts", () => {
    // 152 septets, then "€" (2) would cross 153: it starts part two; 152 + 2 + 152 + 1 = 307 septets.
    const text = `${"a".repeat(152)}€${"a".repeat(152)}`;
    expect(countSegments(text).segments).toBe(3);
    // Without the straddle rule the same septet count fits two parts.
    expect(countSegments(`${"a".repeat(152)}${"a".repeat(154)}`).segments).toBe(2);
  });

  it("anything outside GSM-7 makes the text UCS-2: 70 code units, then 67 per part", () => {
    expect(countSegments("ç")).toEqual({ encoding: "UCS-2", segments: 1 }); // lower-case ç is not GSM-7 (only Ç is)
    expect(countSegments("ж".repeat(70))).toEqual({ encoding: "UCS-2", segments: 1 });
    expect(countSegments("ж".repeat(71))).toEqual({ encoding: "UCS-2", segments: 2 });
    expect(countSegments("ж".repeat(134))).toEqual({ encoding: "UCS-2", segments: 2 });
    expect(countSegments("ж".repeat(135))).toEqual({ encoding: "UCS-2", segments: 3 });
    expect(countSegments(`${"a".repeat(159)}✓`)).toEqual({ encoding: "UCS-2", segments: 3 });
  });

  it("an emoji is two code units and is never split", () => {
    expect(countSegments("📞".repeat(35))).toEqual({ encoding: "UCS-2", segments: 1 });
    expect(countSegments(`${"📞".repeat(35)}a`).segments).toBe(2);
    // 66 units, then a pair that would cross 67: it starts part two (66 + 2 + 66 = 134 units, three parts).
    expect(countSegments(`${"a".repeat(66)}📞${"a".repeat(66)}`).segments).toBe(3);
    expect(countSegments(`✓${"a".repeat(133)}`)).toEqual({ encoding: "UCS-2", segments: 2 });
  });
});
