import type { Command } from "commander";
import type { Core } from "../core/context.js";
import type { DataDirInUseError } from "../core/db/data-dir-lock.js";

// The service's modules are loaded by the commands that run it, so `agentline --help` and the
// API commands start quickly.
const load = async () => {
  const [config, createCore, logger, errors, lock, destination] = await Promise.all([
    import("../core/config.js"),
    import("../core/create-core.js"),
    import("../core/logger.js"),
    import("../core/errors.js"),
    import("../core/db/data-dir-lock.js"),
    import("../core/log-destination.js"),
  ]);
  return { ...config, ...createCore, ...logger, ...errors, ...lock, ...destination };
};

/** `agentline serve`: the HTTP service, configured by the environment (docs/configuration.md). */
export async function serve(): Promise<void> {
  const { loadConfig, createLogger } = await load();
  const { startServer } = await import("../gateway/server.js");
  const { guardProcess } = await import("../gateway/last-resort.js");
  const { startBanner } = await import("./banner.js");
  const config = loadConfig(process.env);
  const logger = createLogger(config.logLevel);
  const running = await startServer(config, { logger });
  // Serving now: an error that escapes every handler is logged, and ends the process unless it
  // concerned one connection (gateway/last-resort.ts). A failed start is reported by bin/.
  guardProcess(logger);
  process.stderr.write(startBanner(config, running));
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

/** `agentline mcp`: MCP over stdio; stdout is the protocol's, so logs go to stderr. */
export async function mcp(): Promise<void> {
  const { loadConfig, createLogger, createCore, streamDestination } = await load();
  const { authenticateAgentToken } = await import("../core/auth/agent-tokens.js");
  const { authenticateApiKey } = await import("../core/auth/api-keys.js");
  const { serveMcpOverStdio } = await import("../mcp/stdio.js");
  const config = loadConfig(process.env);
  const credential = process.env.AGENTLINE_API_KEY?.trim();
  if (!credential) {
    process.stderr.write('agentline mcp: set AGENTLINE_API_KEY to an API key (sk_...) or an agent_token (at_...); see README, "Connect an MCP client"\n');
    process.exit(2);
  }
  const logger = createLogger(config.logLevel, streamDestination(process.stderr));
  const core = await createCore(config, { logger });
  const principal = credential.startsWith("at_")
    ? await authenticateAgentToken(core, credential).then((p) => p && { accountId: p.accountId, credentialId: p.tokenId })
    : await authenticateApiKey(core, credential).then((p) => p && { accountId: p.accountId, credentialId: p.keyId });
  if (!principal) {
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
  logger.info({ account_id: principal.accountId, database: core.dbHandle.kind }, "mcp server on stdio");
  await serveMcpOverStdio(core, principal);
  await stop();
}

/**
 * Runs an operator action on the service's database (DATABASE_URL or DATA_DIR) and prints its
 * JSON result; a refusal is one line on stderr, prefixed with the command.
 */
export async function adminAction(name: string, action: (core: Core) => Promise<unknown>): Promise<void> {
  const { loadConfig, createLogger, createCore, AppError, DataDirInUseError, streamDestination } = await load();
  const config = loadConfig(process.env);
  let core: Core;
  try {
    core = await createCore(config, { logger: createLogger("error", streamDestination(process.stderr)), runJobs: false });
  } catch (error) {
    if (!(error instanceof DataDirInUseError)) throw error;
    process.stderr.write(`agentline admin ${name}: ${dataDirInUseAdvice(error)}\n`);
    process.exit(1);
  }
  try {
    process.stdout.write(JSON.stringify(await action(core)) + "\n");
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    process.stderr.write(`agentline admin ${name}: ${error.detail}\n`);
    process.exitCode = 1;
  } finally {
    await core.close();
  }
}

/** What to do when the running service holds the embedded database this command needs. */
function dataDirInUseAdvice(error: DataDirInUseError): string {
  return [
    `the running service (process ${error.holder}) holds the embedded database in ${error.dataDir}, and only one process may open it.`,
    "Either stop the service (Ctrl-C in its terminal) and run this again,",
    "or sign in through the running service instead: `npx agentline login --email you@example.com`",
    "(with no SMTP_URL the code is printed in the service's terminal).",
    "To run commands beside a running service, use PostgreSQL (DATABASE_URL) for both.",
  ].join("\n  ");
}

/** Adds `serve`, `mcp` and `admin` (credit, api-key, carrier-check) to the program. */
export function addServiceCommands(program: Command): void {
  program
    .command("serve", { isDefault: true })
    .description("start the HTTP service (the default command; configured by environment variables, see README)")
    .action(serve);
  program
    .command("mcp")
    .description("serve MCP over stdin/stdout for a local MCP client; AGENTLINE_API_KEY (sk_... or at_...) says whose account; logs go to stderr")
    .action(mcp);
  const admin = program.command("admin").description("operator commands on the service's own database (DATABASE_URL, or DATA_DIR when no service holds it)");
  prefixErrors(
    admin
      .command("credit")
      .description("credit an account (recorded in the ledger with the note)")
      .requiredOption("--account <acct_id>", "the account to credit")
      .requiredOption("--amount <usd>", "dollars, e.g. 10 or 10.50")
      .requiredOption("--note <text>", "why (kept in the ledger)")
      .action((o: { account: string; amount: string; note: string }) =>
        adminAction("credit", async (core) =>
          (await import("../core/billing/operator-credit.js")).operatorCredit(core, { accountId: o.account, amountUsd: o.amount, note: o.note }),
        ),
      ),
    "agentline admin credit",
  );
  prefixErrors(
    admin
      .command("api-key")
      .description("print a new API key for the address's account (created if new)")
      .requiredOption("--email <address>", "the account's e-mail address")
      .action((o: { email: string }) =>
        adminAction("api-key", async (core) => {
          const { issueKeyForEmail } = await import("../core/auth/otp.js");
          return core.db.transaction((tx) => issueKeyForEmail(core, tx, o.email, "admin"));
        }),
      ),
    "agentline admin api-key",
  );
  prefixErrors(
    admin
      .command("carrier-check")
      .description("check the carrier's credentials and print the webhook URLs it will call (no database needed)")
      .action(async () => {
        const [{ loadConfig }, { carrierCheck }] = await Promise.all([import("../core/config.js"), import("./carrier-check.js")]);
        await carrierCheck(loadConfig(process.env));
      }),
    "agentline admin carrier-check",
  );
}

/** Usage errors of a command start with its name, like its other refusals. */
function prefixErrors(command: Command, prefix: string): void {
  command.configureOutput({ outputError: (text, write) => write(`${prefix}: ${text.replace(/^error: /, "")}`) });
}
