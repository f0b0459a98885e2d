import type { Config } from "../config.js";
import type { CarrierKind } from "./carrier-kind.js";
import { sandboxKind } from "./sandbox/sandbox-kind.js";
import { twilioKind } from "./twilio/twilio-kind.js";

/**
 * The carrier table: every carrier CARRIER may name, one line each. A carrier is a folder under
 * core/carrier/ implementing the Carrier interface (carrier.ts), with its kind (carrier-kind.ts);
 * the service asks the table, never the carrier's name.
 */
export const CARRIERS: Readonly<Record<Config["carrier"], CarrierKind>> = {
  sandbox: sandboxKind,
  twilio: twilioKind,
};
