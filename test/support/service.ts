import { readFileSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { inject } from "vitest";
import { type Config, loadConfig } from "../../core/config.js";
import { createLogger, type Logger } from "../../core/logger.js";
import type { Mailer } from "../../core/mail/mailer.js";
import { type RunningServer, startServer } from "../../gateway/server.js";
import { createTestDatabase } from "./postgres.js";

export interface TestService extends RunningServer {
  /** Stops the server and throws its database away. */
  stop(): Promise<void>;
}

export interface TestServiceOptions {
  env?: Record<string, string>;
  logger?: Logger;
  mailer?: Mailer;
  /** An existing database to use instead of a fresh clone (several servers sharing one). */
  databaseUrl?: string;
  /** An existing PGlite data directory instead of a fresh in-memory database (servers taking turns on one). */
  dataDir?: string;
}

/** True when the suite runs against PostgreSQL (TEST_DATABASE_URL) rather than PGlite. */
export const onPostgres = inject("postgresTemplate") !== undefined;

/** A fresh migrated database: PGlite loaded from the template, or a clone on PostgreSQL. */
export async function freshDatabase(): Promise<{ pglite?: PGlite; url?: string; drop(): Promise<void> }> {
  const template = inject("postgresTemplate");
  if (template) return createTestDatabase(template);
  const tar = readFileSync(inject("pgliteTemplate"));
  const pglite = await PGlite.create({ loadDataDir: new Blob([tar]) });
  return { pglite, drop: async () => {} };
}

/** Starts the whole service in this process on a fresh database, listening on a free port. */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const given = options.databaseUrl !== undefined || options.dataDir !== undefined;
  const database = given ? { url: options.databaseUrl, drop: async () => {} } : await freshDatabase();
  const config: Config = loadConfig({
    PORT: "0",
    LOG_LEVEL: "silent",
    DATABASE_URL: database.url,
    DATA_DIR: options.dataDir ?? "memory://",
    ...options.env,
  });
  const running = await startServer(config, {
    logger: options.logger ?? createLogger(config.logLevel),
    ...(database.pglite ? { pglite: database.pglite } : {}),
    ...(options.mailer ? { mailer: options.mailer } : {}),
  });
  return {
    ...running,
    async stop() {
      await running.close();
      await database.drop();
    },
  };
}
