import { CARRIERS } from "../core/carrier/carriers.js";
import type { Config } from "../core/config.js";

/**
 * `agentline admin carrier-check`: prints, as JSON, whether the configured carrier accepts the
 * service's credentials and which URLs it will call; exits 1 when it does not.
 */
export async function carrierCheck(config: Config): Promise<void> {
  const report = await CARRIERS[config.carrier].check(config);
  process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  if (!report.ok) {
    process.stderr.write(`agentline admin carrier-check: ${report.error}\n`);
    process.exitCode = 1;
  }
}
