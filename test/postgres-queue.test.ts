import { describe, expect, it } from "vitest";
// postgres.js's own queue, as patched (patches/postgres+3.4.9.patch): the pool keeps its open,
// busy and waiting connections and queries in these.
// @ts-expect-error: an internal module of postgres.js, with no types of its own.
import QueueModule from "../node_modules/postgres/src/queue.js";

interface Queue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}
const Queue = QueueModule as <T>(initial?: T[]) => Queue<T>;

describe("postgres.js's queue, patched to drop the holes shift() leaves", () => {
  it("stays first-in first-out while busy connections rotate through it, across its compactions", () => {
    // What the pool does with its busy connections under steady load: shift one, give it a
    // query, push it back. It never empties, so the holes used to be kept forever.
    const busy = Queue(["c1", "c2", "c3"]);
    const order: string[] = [];
    for (let i = 0; i < 10_000; i++) order.push(busy.push(busy.shift()!));
    expect(order.filter((c, i) => c !== ["c1", "c2", "c3"][i % 3])).toEqual([]);
    expect(busy.length).toBe(3);
    expect(busy.remove("c2")).toBe("c2");
    // 10,000 rotations of three: the queue reads c2, c3, c1; without c2, c3 then c1.
    expect([busy.shift(), busy.shift(), busy.shift()]).toEqual(["c3", "c1", undefined]);
  });

  it("removes an entry wherever it is, after any number of shifts, and only once", () => {
    const queue = Queue<string>();
    for (let i = 0; i < 100; i++) queue.push(`q${i}`);
    for (let i = 0; i < 60; i++) expect(queue.shift()).toBe(`q${i}`);
    expect(queue.remove("q10")).toBeNull();
    expect(queue.remove("q70")).toBe("q70");
    expect(queue.remove("q70")).toBeNull();
    expect(queue.length).toBe(39);
    const rest: string[] = [];
    while (queue.length) rest.push(queue.shift()!);
    expect(rest).toEqual(Array.from({ length: 40 }, (_, i) => `q${60 + i}`).filter((q) => q !== "q70"));
    expect(queue.shift()).toBeUndefined();
  });
});
