import { describe, expect, it } from "vitest";
import { addMonths } from "../../core/billing/months.js";

// A number's lease runs in calendar months: the renewal date keeps its day of the month, except
// where the month is too short for it. The 22nd (the case the renewal tests use) never shows that.
const plus = (iso: string, n: number) => addMonths(new Date(iso), n).toISOString();

describe("addMonths", () => {
  it("keeps the day and the time of day", () => {
    expect(plus("2026-11-22T10:00:00.000Z", 1)).toBe("2026-12-22T10:00:00.000Z");
    expect(plus("2026-11-22T10:00:00.000Z", 2)).toBe("2027-01-22T10:00:00.000Z");
    expect(plus("2027-01-22T10:00:00.000Z", -2)).toBe("2026-11-22T10:00:00.000Z");
  });

  it("clamps to the last day of a shorter month, leap years included", () => {
    expect(plus("2027-01-31T23:30:00.000Z", 1)).toBe("2027-02-28T23:30:00.000Z");
    expect(plus("2028-01-31T23:30:00.000Z", 1)).toBe("2028-02-29T23:30:00.000Z");
    expect(plus("2027-03-31T08:00:00.000Z", 1)).toBe("2027-04-30T08:00:00.000Z");
    expect(plus("2027-08-31T08:00:00.000Z", 1)).toBe("2027-09-30T08:00:00.000Z");
  });

  it("does not carry a clamp into later months: Jan 31 + 2 is Mar 31", () => {
    expect(plus("2027-01-31T00:00:00.000Z", 2)).toBe("2027-03-31T00:00:00.000Z");
    expect(plus("2027-12-31T00:00:00.000Z", 1)).toBe("2028-01-31T00:00:00.000Z");
  });

  it("does not change the date it is given", () => {
    const start = new Date("2027-01-31T00:00:00.000Z");
    addMonths(start, 1);
    expect(start.toISOString()).toBe("2027-01-31T00:00:00.000Z");
  });
});
