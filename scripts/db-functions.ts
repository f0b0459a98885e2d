// Writes a migration from core/db/functions/: each file there is the one source of a database
// function, and a migration installs it. When a file's definition differs from the one in the
// last migration that creates its function, `npm run db:functions [-- <name>]` has drizzle-kit
// add a custom migration (its journal entry and snapshot, as `drizzle-kit generate --custom`
// makes them) and writes the changed functions into it, each after a DROP of its old signature
// when the arguments or the result changed (CREATE OR REPLACE cannot change those). When every
// file matches, it writes nothing. Applied migrations are never edited; a test fails when a file
// and the migrations disagree (test/db/functions.test.ts).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { migrationsFolder, projectRoot } from "../core/db/paths.js";

export const FUNCTIONS_FOLDER = join(projectRoot, "core", "db", "functions");

const BREAKPOINT = "--> statement-breakpoint";
const CREATE = /^CREATE OR REPLACE FUNCTION\s+(\w+)\s*\(/i;

/** A function's source file: its name is the function's. */
export interface FunctionSource {
  name: string;
  text: string;
}

/** A migration, by its journal tag, with its text. */
export interface Migration {
  tag: string;
  text: string;
}

/** The function files, by name. */
export function readFunctionSources(folder = FUNCTIONS_FOLDER): FunctionSource[] {
  return readdirSync(folder)
    .filter((file) => file.endsWith(".sql"))
    .sort()
    .map((file) => {
      const name = basename(file, ".sql");
      const text = readFileSync(join(folder, file), "utf8");
      if (definedFunction(text) !== name) throw new Error(`${file} must hold one CREATE OR REPLACE FUNCTION ${name}(...) after its comments`);
      return { name, text };
    });
}

/** The migrations in the order they are applied (the journal's). */
export function readMigrations(folder = migrationsFolder): Migration[] {
  const journal = JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as { entries: { tag: string }[] };
  return journal.entries.map(({ tag }) => ({ tag, text: readFileSync(join(folder, `${tag}.sql`), "utf8") }));
}

/**
 * A statement from `CREATE` on: the comments and blank lines before it are left out, so a file's
 * opening comment is its own and not part of what the database gets.
 */
export function definition(statement: string): string {
  return statement.replace(/^(\s*--[^\n]*\n|\s*\n)*/, "").trim();
}

/** The function a statement creates, or undefined. */
function definedFunction(statement: string): string | undefined {
  return CREATE.exec(definition(statement))?.[1];
}

/** The last migration that creates function `name`, with that statement's definition. */
export function lastDefinition(name: string, migrations: Migration[]): { tag: string; definition: string } | undefined {
  for (const migration of [...migrations].reverse()) {
    const statement = migration.text.split(BREAKPOINT).findLast((s) => definedFunction(s) === name);
    if (statement !== undefined) return { tag: migration.tag, definition: definition(statement) };
  }
  return undefined;
}

/** Every function the migrations create. */
export function functionsInMigrations(migrations: Migration[]): Set<string> {
  return new Set(
    migrations.flatMap((m) =>
      m.text
        .split(BREAKPOINT)
        .map(definedFunction)
        .filter((name) => name !== undefined),
    ),
  );
}

/** The function's body as pg_proc.prosrc holds it: the text between its `$$` quotes. */
export function functionBody(text: string): string {
  const start = text.indexOf("$$");
  const end = text.lastIndexOf("$$");
  if (start < 0 || end === start || text.slice(start + 2, end).includes("$$")) throw new Error("a function's body must be quoted with one pair of $$");
  return text.slice(start + 2, end);
}

/** What identifies a function's signature: its argument types and its result, e.g. `(text, integer) json`. */
function signature(definition: string): { args: string; returns: string } {
  const open = definition.indexOf("(");
  let depth = 0;
  let close = open;
  const args: string[] = [];
  let from = open + 1;
  for (; close < definition.length; close++) {
    const char = definition[close];
    if (char === "(") depth++;
    else if (char === ")" && --depth === 0) break;
    else if (char === "," && depth === 1) {
      args.push(definition.slice(from, close));
      from = close + 1;
    }
  }
  args.push(definition.slice(from, close));
  // Each argument is `name type [DEFAULT ...]`; the type is what DROP FUNCTION names.
  const types = args
    .map((arg) => arg.trim().replace(/\s+(DEFAULT|=)\s[\s\S]*$/i, ""))
    .filter((arg) => arg !== "")
    .map((arg) => arg.split(/\s+/).slice(1).join(" ").toLowerCase());
  const returns = /^\s*RETURNS\s+(\S+)/i.exec(definition.slice(close + 1))?.[1]?.toLowerCase() ?? "";
  return { args: types.join(", "), returns };
}

/**
 * The text of a migration that brings the functions up to their files, or null when every file's
 * definition is the one in force.
 */
export function pendingMigration(sources: FunctionSource[], migrations: Migration[]): string | null {
  const statements: string[] = [];
  for (const source of sources) {
    const now = definition(source.text);
    const before = lastDefinition(source.name, migrations)?.definition;
    if (before === now) continue;
    if (before !== undefined) {
      const old = signature(before);
      const next = signature(now);
      if (old.args !== next.args || old.returns !== next.returns) statements.push(`DROP FUNCTION IF EXISTS ${source.name}(${old.args});`);
    }
    statements.push(source.text.trim());
  }
  if (statements.length === 0) return null;
  const heading = "-- Written by `npm run db:functions` from core/db/functions/: each function here is its file there.";
  return `${heading}\n${statements.join(`\n${BREAKPOINT}\n`)}\n`;
}

/** Adds an empty custom migration with drizzle-kit (journal entry and snapshot) and returns its tag. */
function addCustomMigration(name: string): string {
  // The package exports no path to its command; it sits beside the package's entry point.
  const bin = join(dirname(createRequire(import.meta.url).resolve("drizzle-kit")), "bin.cjs");
  execFileSync(process.execPath, [bin, "generate", "--custom", "--name", name], { cwd: projectRoot, stdio: ["ignore", "ignore", "inherit"] });
  return readMigrations().at(-1)!.tag;
}

if (process.argv[1] === import.meta.filename) {
  const name = process.argv[2] ?? "functions";
  const text = pendingMigration(readFunctionSources(), readMigrations());
  if (text === null) {
    process.stderr.write("the functions are as their files have them: no migration written\n");
  } else {
    const tag = addCustomMigration(name);
    const file = join(migrationsFolder, `${tag}.sql`);
    writeFileSync(file, text);
    process.stderr.write(`wrote ${file}\n`);
  }
}
