// The kinds of value settings take (shared by the groups), and what a setting's .meta() holds.

import { z } from "zod";

/** A boolean switch as environments write them: 1/0, true/false, yes/no, on/off. */
export const flag = z
  .enum(["1", "0", "true", "false", "yes", "no", "on", "off"], {
    error: "expected one of 1, 0, true, false, yes, no, on, off",
  })
  .transform((v) => ["1", "true", "yes", "on"].includes(v));

/** A duration such as 250ms, 5s, 30m, 2h. */
const DURATION = /^(\d+)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/** A comma-separated list of durations, e.g. "5s,5m,30m": the waits before each retry, in milliseconds. */
export const schedule = z
  .string()
  .refine((v) => v.split(",").every((part) => DURATION.test(part.trim())), "expected durations such as 5s,5m,30m (units ms, s, m, h)")
  .transform((v) =>
    v.split(",").map((part) => {
      const [, amount, unit] = DURATION.exec(part.trim())!;
      return Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
    }),
  );

/** An http:// or https:// URL. */
export const httpUrl = z.url({ protocol: /^https?$/ });

/** An EVM address. */
export const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x-prefixed 20-byte address")
  .transform((v) => v as `0x${string}`);

/** A decimal USD amount as the API and the environment take it: up to 9 whole digits and 6 decimals. */
export const USD_AMOUNT = /^\d{1,9}(\.\d{1,6})?$/;

export const usd = z.string().regex(USD_AMOUNT, "expected a dollar amount such as 5.00 (at most 6 decimals)");

/** Micro-USD from a decimal USD string (exact: no floating point). */
export function usdToMicros(value: string): number {
  const [whole, fraction = ""] = value.split(".");
  return Number(whole) * 1_000_000 + Number(fraction.padEnd(6, "0"));
}

/** True for a loopback host: 127.0.0.0/8, ::1 or localhost (URL hostnames keep IPv6 brackets). */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/** The advice for a URL that does not parse: the usual causes, none of which echo the value. */
export const UNPARSABLE_URL = "is not a valid URL: check the host and port, and percent-encode special characters in the user name and password";

/**
 * What a setting's `.meta()` holds, beside what its schema says by itself (its default, its range):
 * docs/configuration.md is generated from them (npm run docs:config).
 */
export interface SettingMeta {
  /** What the setting does, in Markdown: one table cell. */
  description: string;
  /** The default as the reference shows it, when the schema's own default cannot say it (derived, generated, or depending on another setting). */
  defaultText?: string;
  /** Its value is a credential: an error names the setting, never the value. */
  secret?: boolean;
}

/** What a group's `.meta()` holds: the heading of its section in docs/configuration.md and the paragraph under it. */
export interface GroupMeta {
  title: string;
  description: string;
}
