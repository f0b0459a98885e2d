import type { Bus } from "../../core/bus.js";
import type { Core } from "../../core/context.js";

/**
 * The service's core with a bus that cannot send on one channel (its connection lost, say), to
 * show that what announces a change on it is refused whole. Each attempt on that channel is
 * recorded with whether it was part of a transaction. Every other channel, and everything else,
 * is the core's own.
 */
export function coreWithBusDown(core: Core, channel: string): { core: Core; attempts: { inTransaction: boolean }[] } {
  const attempts: { inTransaction: boolean }[] = [];
  const publish: Bus["publish"] = (to, message, options) => {
    if (to !== channel) return core.bus.publish(to, message, options);
    attempts.push({ inTransaction: options?.tx !== undefined });
    return Promise.reject(new Error(`the bus cannot send on ${channel}`));
  };
  const bus = Object.create(core.bus, { publish: { value: publish } }) as Bus;
  return { core: Object.create(core, { bus: { value: bus } }) as Core, attempts };
}
