import { describe, expect, it } from "vitest";
import { ReceiverBreakers } from "./receiver-breakers.js";

// The breaker for receivers that keep timing out (docs/decisions/0024-webhook-delivery.md), on a clock the test
// moves: three silent attempts in a row open it for 30 s, then one delivery at a time until one
// is answered. An HTTP error is an answer and never opens it.
describe("ReceiverBreakers", () => {
  const clock = () => {
    let now = 1_000_000;
    return { now: () => new Date(now), advance: (ms: number) => void (now += ms) };
  };

  it("opens after three silent attempts in a row, for 30 s, then lets one through at a time", () => {
    const time = clock();
    const breakers = new ReceiverBreakers(time.now);
    breakers.record("wh_a", false);
    breakers.record("wh_a", false);
    expect(breakers.limits().has("wh_a")).toBe(false);
    breakers.record("wh_a", false);
    expect(breakers.limits().get("wh_a")).toBe(0);
    time.advance(29_999);
    expect(breakers.limits().get("wh_a")).toBe(0);
    time.advance(1);
    expect(breakers.limits().get("wh_a")).toBe(1);
    // Another silence while half open opens it again for a full 30 s.
    breakers.record("wh_a", false);
    time.advance(29_999);
    expect(breakers.limits().get("wh_a")).toBe(0);
    time.advance(1);
    // An answer closes it: no limit beyond the receiver's concurrency.
    breakers.record("wh_a", true);
    expect(breakers.limits().has("wh_a")).toBe(false);
  });

  it("counts silences in a row only, and only of that receiver", () => {
    const breakers = new ReceiverBreakers(clock().now);
    breakers.record("wh_a", false);
    breakers.record("wh_a", false);
    breakers.record("wh_a", true);
    breakers.record("wh_a", false);
    breakers.record("wh_a", false);
    breakers.record("wh_b", false);
    expect(breakers.limits().size).toBe(0);
    breakers.record("wh_b", false);
    breakers.record("wh_b", false);
    expect([...breakers.limits()]).toEqual([["wh_b", 0]]);
  });
});
