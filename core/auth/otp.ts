import { randomInt } from "node:crypto";
import { eq } from "drizzle-orm";
import { findOrCreateAccountByEmail } from "../accounts/accounts.js";
import { usdToMicros } from "../billing/money.js";
import type { Core } from "../context.js";
import type { Transaction } from "../db/database.js";
import { otpCodes } from "../db/schema/otp-codes.js";
import { AppError } from "../errors.js";
import { mintApiKey } from "./api-keys.js";
import { consumeRateLimits } from "./rate-limit.js";
import { hmacHex, safeEqual } from "./tokens.js";

const OTP_LIFETIME_MS = 10 * 60_000;
const TEN_MINUTES = 10 * 60_000;

/**
 * Limits of the spec's table: per address and per IP for codes, per address for verifies; and per
 * IP for verifies, so one client cannot guess codes across many addresses at once.
 */
export const OTP_LIMITS = { perEmail: 3, perIp: 5, verifyPerEmail: 5, verifyPerIp: 30, windowMs: TEN_MINUTES } as const;

/** Addresses are compared case-insensitively: one account per mailbox. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function codeHash(core: Core, email: string, code: string): string {
  // Keyed: a plain hash of a 10^6 space would be reversed by trying every code.
  return hmacHex(core.secrets.derive("otp-pepper"), `${email}\n${code}`);
}

/**
 * Where sign-in codes are drawn, one integer below a million each. A property of an object so a
 * test can choose a draw (a small one, to see the padding): mocking node:crypto does not reach a
 * module another test file loaded first, as happens in the mutation run's shared modules.
 */
export const codeDraws = { next: (): number => randomInt(0, 1_000_000) };

/**
 * Sends a 6-digit sign-in code (with no SMTP_URL, writes it to the log and answers `logged`). The
 * answer is the same whether the address has an account or not. A new code replaces the previous one. Limited per address and per IP (429 beyond).
 */
export async function requestOtp(core: Core, input: { email: string; ip: string }) {
  const email = normalizeEmail(input.email);
  const code = String(codeDraws.next()).padStart(6, "0");
  const now = core.now();
  await core.db.transaction(async (tx) => {
    await consumeRateLimits(
      tx,
      [
        { key: `otp:email:${email}`, limit: OTP_LIMITS.perEmail, windowMs: TEN_MINUTES, label: "sign-in codes for this address" },
        { key: `otp:ip:${input.ip}`, limit: OTP_LIMITS.perIp, windowMs: TEN_MINUTES, label: "sign-in codes from this IP address" },
      ],
      now,
    );
    const row = { email, codeHash: codeHash(core, email, code), expiresAt: new Date(now.getTime() + OTP_LIFETIME_MS), createdAt: now };
    await tx.insert(otpCodes).values(row).onConflictDoUpdate({ target: otpCodes.email, set: row });
  });
  try {
    await core.mailer.send({
      to: email,
      subject: `Your agentline sign-in code: ${code}`,
      text: `Your agentline sign-in code is ${code}\n\nIt expires in 10 minutes and works once. If you did not ask for it, ignore this mail.\n`,
    });
  } catch (cause) {
    core.logger.error({ err: cause }, "sign-in mail could not be sent");
    throw new AppError("service_unavailable", "The sign-in code could not be e-mailed right now. Try again shortly.", { cause });
  }
  // Without a mail server the code reached only the server log: the answer says so rather than "sent".
  if (core.mailer.delivery === "log") {
    return {
      status: "logged" as const,
      email,
      expires_in_seconds: OTP_LIFETIME_MS / 1000,
      detail: "No mail server is configured (SMTP_URL): the code was written to the server log.",
    };
  }
  return { status: "sent" as const, email, expires_in_seconds: OTP_LIFETIME_MS / 1000 };
}

/**
 * Exchanges a code for a new API key, creating the account on first sign-in. Every attempt
 * counts toward the per-address and per-IP limits, right or wrong; every failure gives the same answer.
 */
export async function verifyOtp(core: Core, input: { email: string; otp: string; ip: string }) {
  return redeemOtp(core, input, (tx, email) => issueKeyForEmail(core, tx, email, "sign-in"));
}

/**
 * Signs an address in with its code and answers its account (created on first sign-in), minting
 * no key: the OAuth sign-in page's way in. The same limits and answers as verifyOtp.
 */
export async function signInWithOtp(core: Core, input: { email: string; otp: string; ip: string }) {
  return redeemOtp(core, input, (tx, email) =>
    findOrCreateAccountByEmail(tx, email, { creditMicros: usdToMicros(core.config.signupCreditUsd), at: core.now() }),
  );
}

async function redeemOtp<T>(core: Core, input: { email: string; otp: string; ip: string }, signIn: (tx: Transaction, email: string) => Promise<T>): Promise<T> {
  const email = normalizeEmail(input.email);
  const now = core.now();
  // Counted in its own transaction so that a wrong code still uses up an attempt.
  await core.db.transaction((tx) =>
    consumeRateLimits(
      tx,
      [
        { key: `verify:email:${email}`, limit: OTP_LIMITS.verifyPerEmail, windowMs: TEN_MINUTES, label: "code attempts for this address" },
        { key: `verify:ip:${input.ip}`, limit: OTP_LIMITS.verifyPerIp, windowMs: TEN_MINUTES, label: "code attempts from this IP address" },
      ],
      now,
    ),
  );
  return core.db.transaction(async (tx) => {
    const [row] = await tx.select().from(otpCodes).where(eq(otpCodes.email, email)).for("update");
    const valid = row !== undefined && row.expiresAt > now && safeEqual(row.codeHash, codeHash(core, email, input.otp));
    if (!valid) throw new AppError("invalid_otp", "The code is invalid or has expired. Request a new one with POST /v1/auth/otp.");
    await tx.delete(otpCodes).where(eq(otpCodes.email, email));
    return signIn(tx, email);
  });
}

/**
 * A new API key for the account of an e-mail address, creating the account (with its signup
 * credit) when there is none. Sign-in uses it once the code checks out; `agentline admin api-key`
 * uses it directly.
 */
export async function issueKeyForEmail(core: Core, tx: Transaction, email: string, keyName: string) {
  const account = await findOrCreateAccountByEmail(tx, normalizeEmail(email), { creditMicros: usdToMicros(core.config.signupCreditUsd), at: core.now() });
  const key = await mintApiKey(tx, account.accountId, keyName);
  return { api_key: key.api_key, key_id: key.key_id, account_id: account.accountId, account_created: account.created };
}
