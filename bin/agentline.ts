#!/usr/bin/env node
import { parseArgs } from "node:util";
import { operatorCredit } from "../core/billing/operator-credit.js";
import { ConfigError, loadConfig } from "../core/config.js";
import { createCore } from "../core/core.js";
import { AppError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { startServer } from "../gateway/server.js";

const USAGE = `usage: agentline <command>

commands:
  serve                                   start the HTTP service (the default; configured by environment, see README)
  admin credit --account acct_... --amount 10 --note "why"
                                          credit an account (recorded in the ledger with the note)
`;

/** Operator commands: they open the same database as the service (DATABASE_URL or DATA_DIR). */
async function admin(args: string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action !== "credit") {
    process.stderr.write(`agentline admin: unknown action ${JSON.stringify(action ?? "")}\n${USAGE}`);
    process.exit(2);
  }
  let values: { account?: string; amount?: string; note?: string };
  try {
    ({ values } = parseArgs({ args: rest, options: { account: { type: "string" }, amount: { type: "string" }, note: { type: "string" } }, strict: true }));
  } catch (error) {
    process.stderr.write(`agentline admin credit: ${(error as Error).message}\n`);
    process.exit(2);
  }
  if (!values.account || !values.amount || !values.note) {
    process.stderr.write("agentline admin credit: --account, --amount and --note are all required\n");
    process.exit(2);
  }
  const config = loadConfig(process.env);
  const core = await createCore(config, { logger: createLogger("error", process.stderr as never), runJobs: false });
  try {
    const result = await operatorCredit(core, { accountId: values.account, amountUsd: values.amount, note: values.note });
    process.stdout.write(JSON.stringify(result) + "\n");
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    process.stderr.write(`agentline admin credit: ${error.detail}\n`);
    process.exitCode = 1;
  } finally {
    await core.close();
  }
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
  // A bad configuration is one line naming the variable; anything else gets its stack.
  process.stderr.write(error instanceof ConfigError ? `agentline: ${error.message}\n` : `agentline: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
