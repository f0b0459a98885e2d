// Builds dist/ only when a source changed since the last build, so a restart (`npm start`,
// `npm run admin`, `npm run bench`) does not spend seconds recompiling an unchanged tree, while a
// fresh clone (no dist/) or an edited file still gets its build. Plain Node and the TypeScript compiler the build uses anyway.
// The build's output goes to stderr: stdout belongs to the command that follows.

import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const STAMP = join("dist", ".build-stamp");
// What the build reads besides the sources: a change to any of them calls for a new build too.
const INPUTS = ["tsconfig.json", "tsconfig.build.json", "package-lock.json", "sdk/src", "sdk/tsconfig.json", "sdk/package.json", "scripts/build-mcp-app.mjs"];

/** The newest modification time under a path (a file, or a directory walked recursively). */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (entry === "node_modules") continue;
    latest = Math.max(latest, newest(join(path, entry)));
  }
  return latest;
}

// TypeScript's own reader: tsconfig files may hold comments, which JSON.parse refuses.
const { config, error } = ts.parseConfigFileTextToJson("tsconfig.build.json", readFileSync("tsconfig.build.json", "utf8"));
if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, "\n"));
const { include = [] } = config;
const sources = Math.max(...[...include, ...INPUTS].map(newest));
const built = existsSync(STAMP) ? statSync(STAMP).mtimeMs : -1;

if (sources < built) process.exit(0);

const started = new Date();
execFileSync("npm", ["run", "--silent", "build"], { stdio: ["ignore", 2, 2] });
// Stamped with the time the build began: a file saved while it ran is newer, and rebuilds next time.
writeFileSync(STAMP, `${started.toISOString()}\n`);
utimesSync(STAMP, started, started);
