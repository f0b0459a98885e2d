import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Where benchmarks and the fault suite write their figures: `AGENTLINE_RESULTS_DIR`, by default
 * /tmp/agentline-results. Outside the source tree, so a run leaves no change to commit; the figures
 * worth keeping go, dated, into docs/benchmarks.md (docs/decisions/0078-bench-and-test-apart.md).
 */
export function resultsDir(): string {
  return process.env.AGENTLINE_RESULTS_DIR || "/tmp/agentline-results";
}

/** The path of one results file, `name` (e.g. "voice-turn.json"), its folder made if missing. */
export function resultsFile(name: string): string {
  const dir = resultsDir();
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}

/** Writes a report as indented JSON to `file` (by default `name` in the results folder); returns the path. */
export function writeResults(name: string, report: unknown, file = resultsFile(name)): string {
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  return file;
}
