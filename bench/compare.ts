/**
 * The live turn and the REST figure of this checkout against another commit's, in one run:
 * bench/voice-turn.ts, the same client code, driving each build's service in turn, round after
 * round (base, new; then new, base; ...), so that whatever the machine does meanwhile falls on
 * both. Each figure is reported as a ratio new/base per round and as their geometric mean.
 * The CPU time per turn (the service's process plus PostgreSQL's backends) is the figure that
 * holds on a busy machine: other work delays a turn, it does not make it cost more.
 *
 * Usage: BENCH_BASE=<commit> npm run bench:compare
 *   BENCH_ROUNDS (default 2), and every BENCH_* setting of bench/voice-turn.ts, passed through.
 * The base is checked out with `git worktree` into BENCH_BASE_DIR (default a folder under the
 * system's temporary directory), installed (`npm ci`) and built once; a later run reuses it.
 * Written to compare.json in the results folder (harness/results.ts).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { projectRoot } from "../harness/process.js";
import { resultsDir, writeResults } from "../harness/results.js";
import { round } from "./support.js";

const base = process.env.BENCH_BASE;
if (!base) throw new Error("BENCH_BASE: the commit to compare this checkout with");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const baseCommit = git(["rev-parse", `${base}^{commit}`]);
const baseDir = process.env.BENCH_BASE_DIR ?? join(tmpdir(), `agentline-base-${baseCommit.slice(0, 12)}`);

function git(args: string[]): string {
  return execFileSync("git", args, { cwd: projectRoot, encoding: "utf8" }).trim();
}

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): void {
  const result = spawnSync(command, args, { cwd, stdio: "inherit", env: { ...process.env, ...env } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} in ${cwd} exited with ${result.status}`);
}

/** The base commit's checkout, installed and built. */
function prepareBase(): void {
  if (!existsSync(join(baseDir, "dist", "bin", "agentline.js"))) {
    if (!existsSync(baseDir)) git(["worktree", "add", "--detach", baseDir, baseCommit]);
    run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], baseDir);
    run("npm", ["run", "build"], baseDir);
  }
  run("node", ["scripts/build-if-stale.mjs"], projectRoot);
}

type Report = { results: Record<string, { figures: Record<string, any>; runs: Record<string, any> }> };

/** The figures compared, per database: lower is better unless `higher`. */
const FIGURES: Array<{ name: string; read: (r: Report["results"][string]) => number; higher?: boolean }> = [
  { name: "one call p50, utterance (ms)", read: (r) => r.figures.one_call_at_speech_pace_p50_ms.utterance_to_relay },
  { name: "one call p50, push (ms)", read: (r) => r.figures.one_call_at_speech_pace_p50_ms.push_to_speech },
  { name: "one call, service's own utterance leg (ms)", read: (r) => r.runs.one_call.service_leg_mean_ms.utterance_to_relay },
  { name: "one call, service's own push leg (ms)", read: (r) => r.runs.one_call.service_leg_mean_ms.push_to_speech },
  { name: "paced calls p99, utterance (ms)", read: (r) => r.figures.calls_at_speech_pace_p99_ms.utterance_to_relay },
  { name: "paced calls p99, push (ms)", read: (r) => r.figures.calls_at_speech_pace_p99_ms.push_to_speech },
  { name: "paced calls, CPU per turn, service + database (ms)", read: (r) => r.runs.paced.cpu_ms_per_turn.total },
  { name: "back to back, CPU per turn, service + database (ms)", read: (r) => r.runs.back_to_back.cpu_ms_per_turn.total },
  { name: "back to back, CPU per turn, service (ms)", read: (r) => r.runs.back_to_back.cpu_ms_per_turn.service },
  { name: "back to back (turns/s)", read: (r) => r.figures.back_to_back_turns_per_second.value, higher: true },
  { name: "GET /v1/calls/{id} as a share of a bare hello", read: (r) => r.figures.get_call_vs_bare_hello.share, higher: true },
  { name: "GET /v1/calls/{id}, CPU per request, service + database (µs)", read: (r) => r.figures.get_call_vs_bare_hello.cpu_us_per_get.total },
];

function measure(label: "base" | "new", roundNo: number): Report {
  const output = join(resultsDir(), "compare", `${label}-${roundNo}.json`);
  mkdirSync(join(resultsDir(), "compare"), { recursive: true });
  const root = label === "base" ? baseDir : projectRoot;
  process.stdout.write(`\n== round ${roundNo}: ${label} (${root})\n`);
  run(process.execPath, ["--import", "tsx", join(projectRoot, "bench", "voice-turn.ts")], projectRoot, { BENCH_SERVICE_ROOT: root, BENCH_OUTPUT: output });
  return JSON.parse(readFileSync(output, "utf8")) as Report;
}

function main(): void {
  prepareBase();
  const rounds: Array<{ base: Report; new: Report }> = [];
  for (let n = 1; n <= ROUNDS; n++) {
    // Alternate which goes first, so neither always runs on a machine the other just warmed.
    const order: Array<"base" | "new"> = n % 2 === 1 ? ["base", "new"] : ["new", "base"];
    const pair = {} as { base: Report; new: Report };
    for (const label of order) pair[label] = measure(label, n);
    rounds.push(pair);
  }
  const databases = Object.keys(rounds[0]!.new.results);
  const table: Record<string, Record<string, unknown>> = {};
  for (const database of databases) {
    table[database] = {};
    for (const figure of FIGURES) {
      const pairs = rounds.map((r) => ({ base: figure.read(r.base.results[database]!), new: figure.read(r.new.results[database]!) }));
      const ratios = pairs.map((p) => p.new / p.base);
      const mean = Math.exp(ratios.reduce((sum, r) => sum + Math.log(r), 0) / ratios.length);
      table[database][figure.name] = {
        base: pairs.map((p) => p.base),
        new: pairs.map((p) => p.new),
        ratio_new_over_base: round(mean),
        better: figure.higher ? "higher" : "lower",
      };
    }
  }
  const report = { benchmark: "compare", date: new Date().toISOString(), base: baseCommit, head: git(["rev-parse", "HEAD"]), rounds: ROUNDS, figures: table };
  const file = writeResults("compare.json", report);
  for (const database of databases) {
    process.stdout.write(`\n${database}: ratio new/base (geometric mean of ${ROUNDS} rounds)\n`);
    for (const [name, value] of Object.entries(table[database]!)) {
      const v = value as { ratio_new_over_base: number; better: string; base: number[]; new: number[] };
      process.stdout.write(`  ${name}: ${v.ratio_new_over_base} (${v.better} is better; base ${v.base.join(", ")}; new ${v.new.join(", ")})\n`);
    }
  }
  process.stdout.write(`written to ${file}\n`);
}

main();
