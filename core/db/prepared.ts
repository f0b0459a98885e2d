import type { Executor } from "./types.js";

/**
 * A statement built once per database handle (or transaction) and then only executed, with its
 * values as placeholders: a hot read then costs no query building, which is most of drizzle's
 * share of a simple request. `name` is drizzle's name for the statement; keep it unique.
 */
export function preparedStatement<Q>(name: string, build: (db: Executor, name: string) => Q): (db: Executor) => Q {
  const built = new WeakMap<Executor, Q>();
  return (db) => {
    let query = built.get(db);
    if (!query) built.set(db, (query = build(db, name)));
    return query;
  };
}
