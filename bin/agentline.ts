#!/usr/bin/env node
import { parseArgs } from "node:util";
import { authenticateAgentToken } from "../core/auth/agent-tokens.js";
import { authenticateApiKey } from "../core/auth/api-keys.js";
import { issueKeyForEmail } from "../core/auth/otp.js";
import { operatorCredit } from "../core/billing/operator-credit.js";
import { loadConfig } from "../core/config.js";
import { createCore } from "../core/create-core.js";
import { AppError } from "../core/errors.js";
import { streamDestination } from "../core/log-destination.js";
import { createLogger } from "../core/logger.js";
import { startServer } from "../gateway/server.js";
import { serveMcpOverStdio } from "../mcp/stdio.js";
import { describeStartupError, wantsStack } from "./startup-errors.js";

const USAGE = `usage: agentline <command>

commands:
  serve                                   start the HTTP service (the default; configured by environment, see README)
  mcp                                     serve MCP over stdin/stdout for a local MCP client; AGENTLINE_API_KEY
                                          (an API key sk_... or agent_token at_...) says whose account; logs go to stderr
  admin credit --account acct_... --amount 10 --note "why"
                                          credit an account (recorded in the ledger with the note)
  admin api-key --email you@example.com   print a new API key for the address's account (created if new)
`;

/** Operator commands: they open the same database as the service (DATABASE_URL or DATA_DIR). */
async function admin(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  const actions = { credit: ["account", "amount", "note"], "api-key": ["email"] } as const;
  if (action !== "credit" && action !== "api-key") {
    process.stderr.write(`agentline admin: unknown action ${JSON.stringify(action ?? "")}\n${USAGE}`);
    process.exit(2);
  }
  const names = actions[action];
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({ args: rest, options: Object.fromEntries(names.map((name) => [name, { type: "string" as const }])), strict: true }));
  } catch (error) {
    process.stderr.write(`agentline admin ${action}: ${(error as Error).message}\n`);
    process.exit(2);
  }
  if (names.some((name) => !values[name])) {
    process.stderr.write(`agentline admin ${action}: ${names.map((name) => `--${name}`).join(", ")} ${names.length > 1 ? "are all" : "is"} required\n`);
    process.exit(2);
  }
  const config = loadConfig(process.env);
  const core = await createCore(config, { logger: createLogger("error", streamDestination(process.stderr)), runJobs: false });
  try {
    const result =
      action === "credit"
        ? await operatorCredit(core, { accountId: values.account!, amountUsd: values.amount!, note: values.note! })
        : await core.db.transaction((tx) => issueKeyForEmail(core, tx, values.email!, "admin"));
    process.stdout.write(JSON.stringify(result) + "\n");
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    process.stderr.write(`agentline admin ${action}: ${error.detail}\n`);
    process.exitCode = 1;
  } finally {
    await core.close();
  }
}

/** MCP over stdio: the MCP client runs this process; stdout is the protocol's, so logs go to stderr. */
async function mcp(): Promise<void> {
  const config = loadConfig(process.env);
  const credential = process.env.AGENTLINE_API_KEY?.trim();
  if (!credential) {
    process.stderr.write("agentline mcp: set AGENTLINE_API_KEY to an API key (sk_...) or an agent_token (at_...); see README, \"Connect an MCP client\"\n");
    process.exit(2);
  }
  const logger = createLogger(config.logLevel, streamDestination(process.stderr));
  const core = await createCore(config, { logger });
  const accountId = credential.startsWith("at_") ? await authenticateAgentToken(core, credential) : (await authenticateApiKey(core, credential))?.accountId;
  if (!accountId) {
    process.stderr.write("agentline mcp: AGENTLINE_API_KEY is not a valid API key or agent_token for this database (revoked, expired, or from another one)\n");
    await core.close();
    process.exit(1);
  }
  const stop = async () => {
    await core.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
  logger.info({ account_id: accountId, database: core.database.kind }, "mcp server on stdio");
  await serveMcpOverStdio(core, { accountId });
  await stop();
}

async function serve(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const running = await startServer(config, { logger });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    running.close().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

async function main(argv: string[]): Promise<void> {
  const [command = "serve", ...rest] = argv;
  switch (command) {
    case "serve":
      return serve();
    case "mcp":
      return mcp();
    case "admin":
      return admin(rest);
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return;
    default:
      process.stderr.write(`agentline: unknown command ${JSON.stringify(command)}\n${USAGE}`);
      process.exit(2);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // One line naming the cause (bin/startup-errors.ts); the stack only when LOG_LEVEL asks for it.
  process.stderr.write(`agentline: ${describeStartupError(error, process.env)}\n`);
  if (wantsStack(process.env) && error instanceof Error) process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
