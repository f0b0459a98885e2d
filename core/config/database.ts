import { z } from "zod";
import { UNPARSABLE_URL } from "./values.js";

/**
 * Whether postgres.js can read a connection URL: it takes the first of a comma-separated host list
 * and hands the rest to WHATWG's URL parser, which throws a bare "Invalid URL" (naming no setting)
 * on a port out of range or an unencoded character in the password.
 */
function parsesAsPostgresUrl(value: string): boolean {
  const authority = value.slice(value.indexOf("://") + 3).split(/[?/]/)[0]!;
  let hosts: string;
  try {
    hosts = decodeURIComponent(authority.slice(authority.indexOf("@") + 1));
  } catch {
    return false;
  }
  return URL.canParse(value.replace(hosts, hosts.split(",")[0]!));
}

/** The database's settings, each with its documentation (docs/configuration.md is generated from them). */
export const databaseSettings = z
  .object({
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, "expected a postgres:// or postgresql:// URL")
      .refine(parsesAsPostgresUrl, UNPARSABLE_URL)
      .optional()
      .meta({ description: "`postgres://...`: use PostgreSQL (needed for several processes). Unset: embedded PGlite." }),
    DATA_DIR: z.string().min(1).default("./.data").meta({
      description: "Where the embedded database lives (created if missing); `memory://` keeps nothing. One process per directory.",
    }),
  })
  .meta({ title: "Database", description: "PostgreSQL, or the embedded PGlite when no `DATABASE_URL` is set." });

export type DatabaseSettings = z.output<typeof databaseSettings>;

/** The database's part of Config. */
export function databaseConfig(e: DatabaseSettings) {
  return { databaseUrl: e.DATABASE_URL, dataDir: e.DATA_DIR };
}
