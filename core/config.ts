// Each setting is written once, in its group's schema under core/config/: its format, its default
// and (in .meta()) its documentation; docs/configuration.md is generated from them
// (npm run docs:config). Each group's function maps its settings into Config and holds the rules
// between them.

import { z } from "zod";
import { billingConfig, billingSettings } from "./config/billing.js";
import { carrierConfig, carrierSettings } from "./config/carrier.js";
import { databaseConfig, databaseSettings } from "./config/database.js";
import { invalid } from "./config/errors.js";
import { limitSettings, limitsConfig } from "./config/limits.js";
import { paymentSettings, paymentsConfig } from "./config/payments.js";
import { serverConfig, serverSettings } from "./config/server.js";
import { signInConfig, signInSettings } from "./config/sign-in.js";
import { turnConfig, turnSettings } from "./config/turns.js";
import type { SettingMeta } from "./config/values.js";
import { webhookConfig, webhookSettings } from "./config/webhooks.js";

export type { TwilioConfig } from "./config/carrier.js";
export { clientSettings } from "./config/clients.js";
export { ConfigError, maskUrlPassword } from "./config/errors.js";
export type { Limits } from "./config/limits.js";
export type { AgentIdSettings } from "./config/sign-in.js";
export type { GroupMeta, SettingMeta } from "./config/values.js";
export { USD_AMOUNT, usdToMicros } from "./config/values.js";

/** The groups of settings the service reads, in the order docs/configuration.md lists them. */
export const SETTING_GROUPS = [
  serverSettings,
  databaseSettings,
  signInSettings,
  carrierSettings,
  paymentSettings,
  billingSettings,
  webhookSettings,
  turnSettings,
  limitSettings,
] as const;

/** One shape of every group's settings. */
type Merged<Groups extends readonly z.ZodObject[]> = Groups extends readonly [infer First extends z.ZodObject, ...infer Rest extends readonly z.ZodObject[]]
  ? First["shape"] & Merged<Rest>
  : unknown;

/** Every environment variable the service reads (no setting is in two groups: the reference generator checks). Empty strings count as unset. */
const EnvSchema = z.object(Object.assign({}, ...SETTING_GROUPS.map((group) => group.shape)) as Merged<typeof SETTING_GROUPS>);

type Env = z.output<typeof EnvSchema>;

/**
 * Settings whose values are secrets (`secret` in their meta): an error about one names it, never
 * its value (and startup errors remove their values from any other message).
 */
export const SECRET_SETTINGS: ReadonlySet<string> = new Set(
  Object.entries(EnvSchema.shape)
    .filter(([, schema]) => (schema.meta() as SettingMeta | undefined)?.secret)
    .map(([name]) => name),
);

/** The typed configuration every module receives; nothing else reads process.env. */
export type Config = ReturnType<typeof toConfig>;

/** Parses an environment (normally process.env) once into a Config, or throws ConfigError. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([key, value]) => key in EnvSchema.shape && value !== ""));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? "environment");
    throw invalid(name, present[name] ?? "", issue.message, { secret: SECRET_SETTINGS.has(name) });
  }
  return toConfig(parsed.data);
}

/** Every group's part of Config, in the order their rules are checked when several are broken. */
function toConfig(e: Env) {
  return {
    ...serverConfig(e),
    ...databaseConfig(e),
    ...paymentsConfig(e),
    ...signInConfig(e),
    ...carrierConfig(e),
    ...billingConfig(e),
    ...webhookConfig(e),
    ...turnConfig(e),
    ...limitsConfig(e),
  };
}
