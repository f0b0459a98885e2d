import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeRateLimits, type RateLimitRule } from "../../core/auth/rate-limit.js";
import type { AppError } from "../../core/errors.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

let serial = 0;
const rule = (name: string, limit: number, windowMs = 600_000): RateLimitRule => ({
  key: `test:${name}:${++serial}`,
  limit,
  windowMs,
  label: `${name} things`,
});
const consume = (rules: RateLimitRule[], at: number) => service.core.db.transaction((tx) => consumeRateLimits(tx, rules, new Date(at)));
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("expected a 429"),
    (e: AppError) => e,
  );
const T0 = Date.parse("2030-01-01T00:00:00Z");

describe("rate limits", () => {
  it("stops counting a hit exactly one window after it", async () => {
    const once = rule("once", 1, 60_000);
    await consume([once], T0);
    expect((await refusal(consume([once], T0 + 59_999))).code).toBe("rate_limited");
    await expect(consume([once], T0 + 60_000)).resolves.toBeUndefined();
  });

  it("takes Retry-After from the oldest hit in the window, in the header, the body and the message", async () => {
    const twice = rule("twice", 2, 600_000);
    await consume([twice], T0);
    await consume([twice], T0 + 100_000);
    const error = await refusal(consume([twice], T0 + 200_000));
    expect(error.status).toBe(429);
    expect(error.headers).toEqual({ "Retry-After": "400" });
    expect(error.extra).toEqual({ retry_after: 400 });
    expect(error.detail).toBe("Too many twice things: at most 2 per 10 minutes. Try again in 400 s.");
  });

  it("states the window in minutes", async () => {
    const hourly = rule("hourly", 1, 3_600_000);
    await consume([hourly], T0);
    expect((await refusal(consume([hourly], T0 + 1_000))).detail).toBe(`Too many hourly things: at most 1 per 60 minutes. Try again in 3599 s.`);
  });

  it("reports the same limit whatever the order of the rules", async () => {
    const a = { ...rule("a", 1), key: `a:${++serial}` };
    const b = { ...rule("b", 1), key: `b:${serial}` };
    await consume([a, b], T0);
    expect((await refusal(consume([b, a], T0 + 1_000))).detail).toMatch(/^Too many a things/);
    expect((await refusal(consume([a, b], T0 + 1_000))).detail).toMatch(/^Too many a things/);
  });

  it("counts nothing for a refused request", async () => {
    const free = rule("free", 1);
    const full = rule("full", 1);
    await consume([full], T0);
    await refusal(consume([free, full], T0 + 1_000));
    await expect(consume([free], T0 + 2_000)).resolves.toBeUndefined();
  });
});
