import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, executeRows, openDatabase } from "../../core/db/database.js";
import { hole, jsonTemplate } from "../../core/db/json-template.js";
import { migrationsFolder } from "../../core/db/paths.js";
import { createLogger } from "../../core/logger.js";
import {
  definition,
  functionBody,
  functionsInMigrations,
  lastDefinition,
  pendingMigration,
  readFunctionSources,
  readMigrations,
} from "../../scripts/db-functions.js";
import { freshDatabase } from "../support/service.js";

const sources = readFunctionSources();
const migrations = readMigrations();
// The functions as the migrations have them: what the generator's own tests edit, so that they
// test the generator whatever state the files are in.
const [openTurn, pushContext] = ["agentline_open_turn", "agentline_push_context"].map((name) => ({ name, text: lastDefinition(name, migrations)!.definition }));

describe("core/db/functions/", () => {
  it("holds the live turn's two functions, the only ones the migrations create", () => {
    expect(sources.map((s) => s.name)).toEqual(["agentline_open_turn", "agentline_push_context"]);
    expect([...functionsInMigrations(migrations)].sort()).toEqual(sources.map((s) => s.name));
  });

  it.each(sources.map((s) => [s.name, s] as const))("%s is as the last migration that creates it has it (run `npm run db:functions`)", (name, source) => {
    // Compared line by line so a failure shows where the file and the migration part.
    expect(definition(source.text).split("\n")).toEqual(lastDefinition(name, migrations)?.definition.split("\n"));
  });

  it("leaves no migration to write", () => {
    expect(pendingMigration(sources, migrations)).toBeNull();
  });

  it("would notice an edited body: the migration it writes holds just that, with no DROP", () => {
    const edited = { ...openTurn!, text: openTurn!.text.replace("ORDER BY seq LIMIT 50", "ORDER BY seq LIMIT 51") };
    expect(edited.text).not.toBe(openTurn!.text);
    const written = pendingMigration([edited, pushContext!], migrations)!;
    expect(written).toContain("LIMIT 51");
    expect(written).not.toContain("DROP FUNCTION");
    expect(written).not.toContain("agentline_push_context");
  });

  it("drops the old signature first when the arguments change", () => {
    const widened = { ...pushContext!, text: pushContext!.text.replace("p_relay_live_since timestamptz", "p_relay_live_since timestamptz, p_extra text") };
    const statements = pendingMigration([openTurn!, widened], migrations)!.split("--> statement-breakpoint");
    expect(statements).toHaveLength(2);
    expect(statements[0]).toContain("DROP FUNCTION IF EXISTS agentline_push_context(text, text, text, boolean, timestamptz, text, text[], timestamptz);");
    expect(definition(statements[1]!)).toBe(definition(widened.text));
  });

  it("leaves a file's opening comment to the file: editing it writes no migration", () => {
    expect(pendingMigration([{ ...openTurn!, text: `-- One more word.\n${openTurn!.text}` }, pushContext!], migrations)).toBeNull();
  });

  it("has each migration in the journal newer than the one before (the PostgreSQL migrator skips an older one)", () => {
    const { entries } = JSON.parse(readFileSync(join(migrationsFolder, "meta", "_journal.json"), "utf8")) as { entries: { when: number }[] };
    for (let i = 1; i < entries.length; i++) expect(entries[i]!.when).toBeGreaterThan(entries[i - 1]!.when);
  });
});

describe("the migrated database", () => {
  let handle: DatabaseHandle;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const database = await freshDatabase();
    drop = database.drop;
    handle = await openDatabase({
      url: database.url,
      dataDir: "memory://",
      ...(database.pglite ? { pglite: database.pglite } : {}),
      logger: createLogger("silent"),
    });
  });
  afterAll(async () => {
    await handle?.close();
    await drop?.();
  });

  it("runs each function as its file has it, under one signature", async () => {
    const rows = await executeRows<{ name: string; body: string }>(
      handle.db,
      sql`select proname as name, prosrc as body from pg_proc where proname in ('agentline_open_turn', 'agentline_push_context') order by proname`,
    );
    expect(rows.map((r) => r.name)).toEqual(sources.map((s) => s.name));
    for (const source of sources)
      expect(rows.find((r) => r.name === source.name)!.body.split("\n"), source.name).toEqual(functionBody(source.text).split("\n"));
  });

  it("fills a JSON template with format() as jsonTemplate means it", async () => {
    const value = { text: 'a 50% "cut" %s %1$s \\ ü', who: hole(1), nested: [hole(2), { n: 1.5, none: null }], skipped: undefined };
    const [row] = await executeRows<{ filled: string }>(
      handle.db,
      sql`select format(${jsonTemplate(value)}, to_json('agt_"1'::text), '[1,2]'::json)::json::text as filled`,
    );
    expect(row!.filled).toBe(JSON.stringify({ ...value, who: 'agt_"1', nested: [[1, 2], { n: 1.5, none: null }] }));
  });
});
