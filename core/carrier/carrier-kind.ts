import type { Bus } from "../bus.js";
import type { Config } from "../config.js";
import type { Database } from "../db/database.js";
import type { Logger } from "../logger.js";
import type { Carrier } from "./carrier.js";

/** What a carrier is made with, besides the configuration. */
export interface CarrierDependencies {
  db: Database;
  bus: Bus;
  logger: Logger;
}

/** What `agentline admin carrier-check` prints: `ok`, and whatever the carrier can tell of its setup. */
export interface CarrierCheck {
  ok: boolean;
  carrier: string;
  /** What the operator should know. */
  note?: string;
  /** Why it is not ok. */
  error?: string;
}

/**
 * A carrier as the service knows it before making one: its line in the carrier table
 * (core/carrier/carriers.ts). What differs by carrier is asked of it here, or of the Carrier it
 * makes, never decided by its name.
 */
export interface CarrierKind {
  /**
   * Makes the carrier for this configuration. A carrier with an SDK of its own loads it here, so
   * a start with another carrier never does.
   */
  create(config: Config, deps: CarrierDependencies): Promise<Carrier>;
  /** Checks that the carrier takes the service's credentials, and reports what it will call. */
  check(config: Config): Promise<CarrierCheck>;
  /**
   * Whether its calls and texts have a far party that the client plays (the Carrier's
   * `farParty`): the routes under /v1/sandbox and the simulate_* MCP tools are served only then.
   * Known before the carrier is made, as /openapi.json and the MCP tool list are.
   */
  offersFarParty: boolean;
}
