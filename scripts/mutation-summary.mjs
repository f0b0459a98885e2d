// The mutation score per folder, over every report in reports/mutation/ (or the ones named), and
// each undetected mutant with its place and edit: what the note on a mutation run reports.
// Usage: node scripts/mutation-summary.mjs [report.json ...] (named reports: later ones win)
// Score as Stryker counts it: detected (killed, timed out) over detected and undetected
// (survived, no coverage); errors and ignored mutants are left out.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const DIR = join("reports", "mutation");
const named = process.argv.slice(2);
const reports =
  named.length > 0
    ? named
    : existsSync(DIR)
      ? readdirSync(DIR)
          .filter((f) => f.endsWith(".json") && !f.endsWith("-incremental.json"))
          .map((f) => join(DIR, f))
          // Oldest first, so that a rerun's results replace the run before it.
          .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
      : [];
if (reports.length === 0) {
  console.error("No mutation reports: run npm run mutate first.");
  process.exit(1);
}

const DETECTED = new Set(["Killed", "Timeout"]);
const UNDETECTED = new Set(["Survived", "NoCoverage"]);
/**
 * The newest result per mutant (file, place, edit): a later report of the same mutant wins, so a
 * rerun of some lines (MUTATE=file:10-12) after new tests updates only the mutants it tested.
 */
const byFile = new Map();
for (const report of reports) {
  const { files } = JSON.parse(readFileSync(report, "utf8"));
  for (const [path, file] of Object.entries(files)) {
    const mutants = byFile.get(relative(process.cwd(), path)) ?? new Map();
    for (const mutant of file.mutants) {
      const { start, end } = mutant.location;
      mutants.set(`${start.line}:${start.column}-${end.line}:${end.column} ${mutant.mutatorName} ${mutant.replacement}`, mutant);
    }
    byFile.set(relative(process.cwd(), path), mutants);
  }
}

const folders = new Map();
const undetected = [];
for (const [path, mutants] of [...byFile].sort(([a], [b]) => a.localeCompare(b))) {
  const folder = dirname(path).replace(/\/agentid$/, "");
  const tally = folders.get(folder) ?? { detected: 0, undetected: 0 };
  for (const mutant of mutants.values()) {
    if (DETECTED.has(mutant.status)) tally.detected++;
    else if (UNDETECTED.has(mutant.status)) {
      tally.undetected++;
      undetected.push(
        `${path}:${mutant.location.start.line}:${mutant.location.start.column} ${mutant.status} ${mutant.mutatorName}: ${String(mutant.replacement ?? "")
          .replace(/\s+/g, " ")
          .slice(0, 100)}`,
      );
    }
  }
  folders.set(folder, tally);
}

for (const [folder, { detected, undetected: missed }] of folders) {
  const score = (100 * detected) / Math.max(1, detected + missed);
  console.log(`${folder.padEnd(16)} ${score.toFixed(2).padStart(6)}%  (${detected} detected, ${missed} undetected)`);
}
if (undetected.length > 0) console.log(`\nUndetected:\n${undetected.join("\n")}`);
