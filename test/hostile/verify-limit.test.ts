import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OTP_LIMITS } from "../../core/auth/otp.js";
import { Api } from "../../harness/api.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let others: Bystander;
beforeAll(async () => {
  service = await startTestService({ env: { TRUST_PROXY: "loopback" } });
  others = await bystander(service);
});
afterAll(() => service?.stop());

const from = (ip: string) => ({ headers: { "x-forwarded-for": ip }, unchecked: true });

describe("guessing sign-in codes across many addresses from one IP address", () => {
  it(`is cut off after ${OTP_LIMITS.verifyPerIp} attempts per 10 minutes, with Retry-After, leaving other addresses' clients free`, async () => {
    expect(OTP_LIMITS.verifyPerIp).toBe(30);
    const api = new Api(service.baseUrl);
    const guess = (email: string, ip: string) => api.post("/v1/auth/verify", { email, otp: "123456" }, from(ip));
    for (let i = 0; i < 30; i++) {
      const res = await guess(`target-${i}@example.com`, "198.51.100.7");
      expect(res.status, `attempt ${i + 1}`).toBe(400);
      expect(res.body.code).toBe("invalid_otp");
    }
    const limited = await guess("target-30@example.com", "198.51.100.7");
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe("rate_limited");
    expect(limited.body.detail).toMatch(/^Too many code attempts from this IP address: at most 30 per 10 minutes\./);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another client, and the same address from it, are not held back.
    expect((await guess("target-30@example.com", "198.51.100.8")).body.code).toBe("invalid_otp");
    await others.check();
  });

  it("says the limit in the route's description", async () => {
    const doc = (await new Api(service.baseUrl).get("/openapi.json")).body;
    expect(doc.paths["/v1/auth/verify"].post.description).toContain("30 per IP address per 10 minutes");
  });
});
