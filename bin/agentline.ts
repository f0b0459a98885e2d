#!/usr/bin/env node
import { ConfigError, loadConfig } from "../core/config.js";
import { createLogger } from "../core/logger.js";
import { startServer } from "../gateway/server.js";

const USAGE = `usage: agentline <command>

commands:
  serve    start the HTTP service (the default; configured by environment, see README)
`;

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
  const [command = "serve"] = argv;
  switch (command) {
    case "serve":
      return serve();
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
