import type { Config } from "../core/config.js";

/**
 * `agentline admin carrier-check`: prints, as JSON, whether the configured carrier accepts the
 * service's credentials and which URLs it will call; exits 1 when it does not.
 */
export async function carrierCheck(config: Config): Promise<void> {
  if (config.carrier === "sandbox") {
    process.stdout.write(JSON.stringify({ ok: true, carrier: "sandbox", note: "the sandbox needs no credentials: numbers are fictional and calls are simulated" }) + "\n");
    return;
  }
  const { checkTwilio } = await import("../core/carrier/twilio/carrier-check.js");
  const report = await checkTwilio(config.twilio!, config.baseUrl!);
  process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  if (!report.ok) {
    process.stderr.write(`agentline admin carrier-check: ${report.error}\n`);
    process.exitCode = 1;
  }
}
