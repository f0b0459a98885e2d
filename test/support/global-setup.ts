import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { TestProject } from "vitest/node";
import { openDatabase } from "../../core/db/database.js";
import { createLogger } from "../../core/logger.js";
import { adminUrl, databaseUrl } from "./postgres.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A tarball of a migrated PGlite data directory; each test loads it instead of running initdb. */
    pgliteTemplate: string;
    /** With TEST_DATABASE_URL: a migrated database each test clones with CREATE DATABASE ... TEMPLATE. */
    postgresTemplate: string | undefined;
  }
}

/**
 * Once per run: build dist/ if stale (end-to-end tests start the real bin), migrate a PGlite template,
 * and with TEST_DATABASE_URL a PostgreSQL template database.
 */
export default async function setup(project: TestProject) {
  const root = join(import.meta.dirname, "..", "..");
  // As `npm start` does: build only when a source changed since the last build. Not in a mutation
  // run: its sandbox's sources are the mutated copies (always newer than dist/), its test runners
  // would each start the same build at once, and the tests it runs start no built service.
  if (process.env.STRYKER_MUTATOR_WORKER === undefined) execFileSync(process.execPath, ["scripts/build-if-stale.mjs"], { cwd: root, stdio: "inherit" });

  const logger = createLogger("silent");
  const dir = mkdtempSync(join(tmpdir(), "agentline-template-"));
  const pglite = await PGlite.create();
  const handle = await openDatabase({ dataDir: "memory://", pglite, logger });
  const dump = await pglite.dumpDataDir("none");
  const templatePath = join(dir, "pglite-template.tar");
  writeFileSync(templatePath, Buffer.from(await dump.arrayBuffer()));
  await handle.close();
  project.provide("pgliteTemplate", templatePath);

  let postgresTemplate: string | undefined;
  const admin = adminUrl();
  if (admin) {
    const postgres = (await import("postgres")).default;
    const sql = postgres(admin, { max: 1, onnotice: () => {} });
    postgresTemplate = `agentline_tpl_${process.pid}`;
    await sql.unsafe(`drop database if exists ${postgresTemplate}`);
    await sql.unsafe(`create database ${postgresTemplate}`);
    const tpl = await openDatabase({ url: databaseUrl(postgresTemplate), dataDir: "unused", logger });
    await tpl.close();
    await sql.end();
  }
  project.provide("postgresTemplate", postgresTemplate);

  return async () => {
    rmSync(dir, { recursive: true, force: true });
    if (admin && postgresTemplate) {
      const postgres = (await import("postgres")).default;
      const sql = postgres(admin, { max: 1, onnotice: () => {} });
      await sql.unsafe(`drop database if exists ${postgresTemplate} with (force)`);
      await sql.end();
    }
  };
}
