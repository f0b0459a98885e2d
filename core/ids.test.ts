import { afterEach, describe, expect, it, vi } from "vitest";
import { ID_PREFIXES, isId, newId } from "./ids.js";

// The random part is drawn once per millisecond; a test may choose the next draw, to reach the carry.
const draws = vi.hoisted(() => ({ next: undefined as Buffer | undefined }));
vi.mock("node:crypto", async (importOriginal) => {
  const crypto = await importOriginal<typeof import("node:crypto")>();
  const randomBytes = (size: number) => {
    const chosen = draws.next;
    draws.next = undefined;
    return chosen ?? crypto.randomBytes(size);
  };
  return { ...crypto, randomBytes, default: { ...crypto, randomBytes } };
});

afterEach(() => vi.restoreAllMocks());

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

  it("increments the random part by one within a millisecond, carrying from its low 40 bits and wrapping at 80", () => {
    vi.spyOn(Date, "now").mockReturnValue(Date.UTC(2031, 0, 1));
    draws.next = Buffer.from([0, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff, 0xff]);
    const [first, second] = [newId("turn"), newId("turn")];
    expect(first.slice(-16)).toBe("00000007zzzzzzzz");
    expect(second.slice(-16)).toBe("0000000800000000");

    vi.spyOn(Date, "now").mockReturnValue(Date.UTC(2032, 0, 1));
    draws.next = Buffer.alloc(10, 0xff);
    const [last, wrapped] = [newId("turn"), newId("turn")];
    expect(last.slice(-16)).toBe("z".repeat(16));
    expect(wrapped.slice(-16)).toBe("0".repeat(16));
  });

  it("draws a new random part in a new millisecond, after the time's 10 digits", () => {
    const now = vi.spyOn(Date, "now").mockReturnValue(Date.UTC(2033, 0, 1));
    draws.next = Buffer.alloc(10, 0);
    const first = newId("req");
    expect(first.slice(-16)).toBe("0".repeat(16));
    now.mockReturnValue(Date.UTC(2033, 0, 1) + 1);
    draws.next = Buffer.from([0, 0, 0, 0, 1, 0, 0, 0, 0, 2]);
    const second = newId("req");
    expect(second.slice(-16)).toBe("0000000100000002");
    const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
    const millis = (id: string) => [...id.slice(-26, -16)].reduce((n, c) => n * 32 + ALPHABET.indexOf(c), 0);
    expect(millis(first)).toBe(Date.UTC(2033, 0, 1));
    expect(millis(second)).toBe(Date.UTC(2033, 0, 1) + 1);
  });
});
