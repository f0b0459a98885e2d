import type { CarrierKind } from "../carrier-kind.js";
import { SandboxCarrier } from "./sandbox-carrier.js";

/** The sandbox, the embedded default: nothing outside the machine, and a far party the client plays. */
export const sandboxKind: CarrierKind = {
  create: async (config, deps) => new SandboxCarrier({ ...deps, transferTimeoutMs: config.transferTimeoutMs }),
  check: async () => ({ ok: true, carrier: "sandbox", note: "the sandbox needs no credentials: numbers are fictional and calls are simulated" }),
  offersFarParty: true,
};
