import type { PGlite } from "@electric-sql/pglite";
import type { Config } from "./config.js";
import { openDatabase, type Database, type DatabaseHandle } from "./db/database.js";
import type { Logger } from "./logger.js";
import { createMailer, type Mailer } from "./mail/mailer.js";
import { loadServerSecrets, type ServerSecrets } from "./secrets.js";

/** Everything core operations need, built once per process and passed down. */
export interface Core {
  config: Config;
  db: Database;
  database: DatabaseHandle;
  logger: Logger;
  mailer: Mailer;
  secrets: ServerSecrets;
  /** The clock; tests may replace it to move time. */
  now(): Date;
  /** Closes what the core opened (the database, the mail transport). */
  close(): Promise<void>;
}

export interface CreateCoreOptions {
  logger: Logger;
  /** A ready PGlite instead of opening DATA_DIR (tests). */
  pglite?: PGlite;
  mailer?: Mailer;
}

/** Opens the database (migrating it), loads the server secret and wires the core services. */
export async function createCore(config: Config, options: CreateCoreOptions): Promise<Core> {
  const { logger } = options;
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir, pglite: options.pglite, logger });
  const secrets = await loadServerSecrets(database.db, config.secretKey);
  const mailer = options.mailer ?? createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, logger });
  const core: Core = {
    config,
    db: database.db,
    database,
    logger,
    mailer,
    secrets,
    now: () => new Date(),
    async close() {
      mailer.close();
      await database.close();
    },
  };
  return core;
}
