import type { Config } from "../core/config.js";
import type { RunningServer } from "../gateway/server.js";

/**
 * What a person starting the service wants to know, in plain lines on stderr (stdout carries the
 * JSON logs): where it listens, where the reference is, and where sign-in codes go.
 */
export function startBanner(config: Config, running: Pick<RunningServer, "baseUrl" | "core">): string {
  const database =
    running.core.dbHandle.kind === "postgres"
      ? "PostgreSQL (DATABASE_URL)"
      : config.dataDir === "memory://"
        ? "embedded, in memory (kept nowhere)"
        : `embedded, in ${config.dataDir}`;
  const codes = config.smtpUrl ? "mailed through SMTP_URL" : 'not mailed (no SMTP_URL): printed in this log, look for "Your agentline sign-in code"';
  return [
    "",
    `agentline is listening on ${running.baseUrl}`,
    `  API reference  ${running.baseUrl}/docs`,
    `  database       ${database}`,
    `  carrier        ${config.carrier}`,
    `  sign-in codes  ${codes}`,
    `  next           npx agentline login --email you@example.com`,
    "",
    "",
  ].join("\n");
}
