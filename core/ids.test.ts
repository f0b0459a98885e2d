import { describe, expect, it } from "vitest";
import { ID_PREFIXES, isId, newId } from "./ids.js";

describe("newId", () => {
  it("makes prefixed 26-character ids for every prefix", () => {
    for (const prefix of ID_PREFIXES) {
      const id = newId(prefix);
      expect(id).toMatch(new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`));
      expect(isId(prefix, id)).toBe(true);
    }
    expect(isId("agt", newId("call"))).toBe(false);
  });

  it("sorts in creation order, even within one millisecond", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5000; i++) ids.push(newId("evt"));
    await new Promise((r) => setTimeout(r, 5));
    ids.push(newId("evt"));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("starts with the time, so ids from later milliseconds sort after", async () => {
    const a = newId("agt");
    await new Promise((r) => setTimeout(r, 3));
    const b = newId("agt");
    expect(a.slice(4, 14) < b.slice(4, 14)).toBe(true);
  });
});
