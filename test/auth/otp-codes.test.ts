import { Writable } from "node:stream";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { listApiKeys } from "../../core/auth/api-keys.js";
import { codeDraws, normalizeEmail, requestOtp, verifyOtp } from "../../core/auth/otp.js";
import { hmacHex } from "../../core/auth/tokens.js";
import { balanceOf } from "../../core/billing/ledger.js";
import { otpCodes } from "../../core/db/schema/otp-codes.js";
import type { AppError } from "../../core/errors.js";
import { createLogger } from "../../core/logger.js";
import type { Mailer, MailMessage } from "../../core/mail/mailer.js";
import { startTestService, type TestService } from "../support/service.js";

// Mail leaves the machine: this stand-in keeps what would be sent, or fails like a mail server that is down.
const sent: MailMessage[] = [];
let mailServerDown = false;
const mailer: Mailer = {
  delivery: "smtp",
  async send(message) {
    if (mailServerDown) throw new Error("connect ECONNREFUSED 127.0.0.1:25");
    sent.push(message);
  },
  close() {},
};

const logLines: any[] = [];
let service: TestService;
let realNow: () => Date;
beforeAll(async () => {
  const logger = createLogger(
    "error",
    new Writable({
      write: (chunk, _e, done) => (
        logLines.push(
          ...String(chunk)
            .trim()
            .split("\n")
            .map((l) => JSON.parse(l)),
        ),
        done()
      ),
    }),
  );
  service = await startTestService({ mailer, logger, env: { SIGNUP_CREDIT_USD: "2.50" } });
  realNow = service.core.now;
});
afterEach(() => {
  service.core.now = realNow;
  mailServerDown = false;
});
afterAll(() => service?.stop());

let serial = 0;
const unique = (name: string) => `${name}-${++serial}-${Date.now()}@example.com`;
const uniqueIp = () => `10.9.${serial % 250}.${++serial % 250}`;
const setNow = (ms: number) => {
  service.core.now = () => new Date(ms);
};
function codeSentTo(email: string): string {
  const mail = sent.findLast((m) => m.to === email);
  return /sign-in code is (\d{6})/.exec(mail!.text)![1]!;
}
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("expected a refusal"),
    (e: AppError) => e,
  );

describe("sign-in code rules", () => {
  it("normalises an address by trimming it and lower-casing it", () => {
    expect(normalizeEmail("  Ada@Example.COM \n")).toBe("ada@example.com");
  });

  it("pads a small code with zeros to six digits, and that code signs in", async () => {
    const email = unique("padded");
    const draw = codeDraws.next;
    codeDraws.next = () => 42;
    try {
      await requestOtp(service.core, { email, ip: uniqueIp() });
    } finally {
      codeDraws.next = draw;
    }
    expect(codeSentTo(email)).toBe("000042");
    const verified = await verifyOtp(service.core, { email, otp: "000042", ip: uniqueIp() });
    expect(verified.api_key).toMatch(/^sk_/);
  });

  it("answers sent, for the trimmed lower-case address, when a mail server took the code", async () => {
    const email = unique("trim");
    const answer = await requestOtp(service.core, { email: `  ${email.toUpperCase()}  `, ip: uniqueIp() });
    expect(answer).toEqual({ status: "sent", email, expires_in_seconds: 600 });
    expect(sent.at(-1)!.to).toBe(email);
  });

  it("refuses a wrong code with the one answer for every failure, then takes the right one", async () => {
    const email = unique("wrong");
    await requestOtp(service.core, { email, ip: uniqueIp() });
    const code = codeSentTo(email);
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, "0");
    const error = await failure(verifyOtp(service.core, { email, otp: wrong, ip: uniqueIp() }));
    expect(error.code).toBe("invalid_otp");
    expect(error.detail).toBe("The code is invalid or has expired. Request a new one with POST /v1/auth/otp.");
    expect((await verifyOtp(service.core, { email, otp: code, ip: uniqueIp() })).account_created).toBe(true);
  });

  it("stores a code only as its HMAC under the server's own otp-pepper key", async () => {
    const email = unique("pepper");
    await requestOtp(service.core, { email, ip: uniqueIp() });
    const [row] = await service.core.db.select().from(otpCodes).where(eq(otpCodes.email, email));
    expect(row!.codeHash).toBe(hmacHex(service.core.secrets.derive("otp-pepper"), `${email}\n${codeSentTo(email)}`));
  });

  it("refuses a code at exactly its expiry time, and takes it a millisecond before", async () => {
    const email = unique("expiry");
    const t0 = Date.parse("2030-01-01T00:00:00Z");
    setNow(t0);
    await requestOtp(service.core, { email, ip: uniqueIp() });
    const otp = codeSentTo(email);
    setNow(t0 + 600_000);
    expect((await failure(verifyOtp(service.core, { email, otp, ip: uniqueIp() }))).code).toBe("invalid_otp");
    setNow(t0 + 599_999);
    expect((await verifyOtp(service.core, { email, otp, ip: uniqueIp() })).account_created).toBe(true);
  });

  it("signs in with a key named sign-in and grants the signup credit to a new account", async () => {
    const email = unique("credit");
    await requestOtp(service.core, { email, ip: uniqueIp() });
    const signedIn = await verifyOtp(service.core, { email, otp: codeSentTo(email), ip: uniqueIp() });
    const keys = await listApiKeys(service.core, { accountId: signedIn.account_id, keyId: signedIn.key_id }, { limit: 10, offset: 0 });
    expect(keys.data.map((k) => k.name)).toEqual(["sign-in"]);
    expect(await balanceOf(service.core.db, signedIn.account_id)).toBe(2_500_000);
  });

  it("answers 503 when the mail server cannot take the code", async () => {
    mailServerDown = true;
    const error = await failure(requestOtp(service.core, { email: unique("down"), ip: uniqueIp() }));
    expect(error.code).toBe("service_unavailable");
    expect(error.status).toBe(503);
    expect(error.detail).toBe("The sign-in code could not be e-mailed right now. Try again shortly.");
    expect((error.cause as Error).message).toMatch(/ECONNREFUSED/);
    // The operator's log says why.
    const logged = logLines.find((l) => l.msg === "sign-in mail could not be sent");
    expect(logged?.err?.message).toMatch(/ECONNREFUSED/);
  });

  it("counts codes per address: one address at its limit leaves another free", async () => {
    const busy = unique("busy");
    for (let i = 0; i < 3; i++) await requestOtp(service.core, { email: busy, ip: uniqueIp() });
    const limited = await failure(requestOtp(service.core, { email: busy, ip: uniqueIp() }));
    expect(limited.detail).toMatch(/^Too many sign-in codes for this address: at most 3 per 10 minutes\./);
    await expect(requestOtp(service.core, { email: unique("free"), ip: uniqueIp() })).resolves.toMatchObject({ status: "sent" });
  });

  it("counts codes per IP address, saying so", async () => {
    const ip = uniqueIp();
    for (let i = 0; i < 5; i++) await requestOtp(service.core, { email: unique("ip"), ip });
    const limited = await failure(requestOtp(service.core, { email: unique("ip"), ip }));
    expect(limited.detail).toMatch(/^Too many sign-in codes from this IP address: at most 5 per 10 minutes\./);
  });

  it("counts code attempts per address: one address at its limit leaves another free", async () => {
    const busy = unique("guess");
    for (let i = 0; i < 5; i++) await failure(verifyOtp(service.core, { email: busy, otp: "000000", ip: uniqueIp() }));
    const limited = await failure(verifyOtp(service.core, { email: busy, otp: "000000", ip: uniqueIp() }));
    expect(limited.code).toBe("rate_limited");
    expect(limited.detail).toMatch(/^Too many code attempts for this address: at most 5 per 10 minutes\./);
    expect((await failure(verifyOtp(service.core, { email: unique("other"), otp: "000000", ip: uniqueIp() }))).code).toBe("invalid_otp");
  });
});
