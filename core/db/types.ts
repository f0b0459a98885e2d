import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";

/** The drizzle handle core code uses; the same type on PGlite and PostgreSQL. */
export type Database = PgDatabase<PgQueryResultHKT>;
/** A transaction handed to a `db.transaction` callback. Inside it, use only this handle. */
export type Transaction = Parameters<Parameters<Database["transaction"]>[0]>[0];
/** Either; functions that can join a caller's transaction take this. */
export type Executor = Database | Transaction;
