import { describe, expect, it } from "vitest";
import { createLocalBus } from "../../core/bus.js";
import { createLogger } from "../../core/logger.js";

// The local bus delivers on a later tick; a macrotask later, everything published has arrived.
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the local bus", () => {
  it("delivers to every subscriber of the channel and to no other channel", async () => {
    const bus = createLocalBus(createLogger("silent"));
    const first: unknown[] = [];
    const second: unknown[] = [];
    const other: unknown[] = [];
    bus.subscribe("calls", (m) => first.push(m));
    bus.subscribe("calls", (m) => second.push(m));
    bus.subscribe("speech", (m) => other.push(m));

    await bus.publish("calls", { call_id: "call_1", status: "ringing" });
    await settle();

    expect(first).toEqual([{ call_id: "call_1", status: "ringing" }]);
    expect(second).toEqual([{ call_id: "call_1", status: "ringing" }]);
    expect(other).toEqual([]);
    await bus.close();
  });

  it("stops delivering to a handler once it unsubscribes", async () => {
    const bus = createLocalBus(createLogger("silent"));
    const kept: unknown[] = [];
    const dropped: unknown[] = [];
    bus.subscribe("calls", (m) => kept.push(m));
    const unsubscribe = bus.subscribe("calls", (m) => dropped.push(m));

    await bus.publish("calls", { n: 1 });
    await settle();
    unsubscribe();
    await bus.publish("calls", { n: 2 });
    await settle();

    expect(kept).toEqual([{ n: 1 }, { n: 2 }]);
    expect(dropped).toEqual([{ n: 1 }]);
    await bus.close();
  });

  it("delivers nothing after close", async () => {
    const bus = createLocalBus(createLogger("silent"));
    const received: unknown[] = [];
    bus.subscribe("calls", (m) => received.push(m));
    await bus.close();
    await bus.publish("calls", { n: 1 });
    await settle();
    expect(received).toEqual([]);
  });

  it("keeps delivering to other handlers when one throws, and logs it", async () => {
    const lines: string[] = [];
    const bus = createLocalBus(createLogger("error", { write: (line: string) => void lines.push(line) }));
    const got: unknown[] = [];
    bus.subscribe("c", () => {
      throw new Error("handler broke");
    });
    bus.subscribe("c", (m) => got.push(m));
    await bus.publish("c", { n: 1 });
    await new Promise((r) => setTimeout(r, 10));
    expect(got).toEqual([{ n: 1 }]);
    expect(lines.join("")).toContain("handler broke");
  });
});
