import type { Carrier } from "../../core/carrier/carrier.js";
import type { Core } from "../../core/context.js";

type Logged = [level: "warn" | "error", fields: Record<string, unknown>, message: string];

/**
 * The service's core with some of its carrier's methods replaced (a carrier that fails), and a
 * logger that records what is logged at warn and error instead of writing it. Everything else is
 * the core's own; the service itself keeps its carrier and logger.
 */
export function coreWithCarrier(core: Core, methods: Partial<Carrier>): { core: Core; logged: Logged[] } {
  const logged: Logged[] = [];
  const record = (level: Logged[0]) => ({
    value: (fields: Record<string, unknown>, message: string) => {
      logged.push([level, fields, message]);
    },
  });
  const logger = Object.create(core.logger, { warn: record("warn"), error: record("error") });
  const carrier = Object.create(core.carrier, Object.fromEntries(Object.entries(methods).map(([name, fn]) => [name, { value: fn }])));
  return { core: Object.create(core, { logger: { value: logger }, carrier: { value: carrier } }) as Core, logged };
}
