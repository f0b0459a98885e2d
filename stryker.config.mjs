// Mutation testing (npm run mutate; not in CI: it takes hours on two cores). Stryker changes the
// money, payment, turn, auth, webhook and relay logic one small edit at a time and runs the tests
// that cover each edit; an edit no test notices is a survivor, listed with its place in
// reports/mutation/. The score is reported per folder.
// MUTATE narrows a run to some files (a glob, comma-separated), e.g. MUTATE=core/billing/money.ts.
const folders = ["core/billing", "payments", "core/relay", "core/webhooks", "core/calls", "core/auth"];
const mutate = process.env.MUTATE ? process.env.MUTATE.split(",") : folders.map((folder) => `${folder}/**/*.ts`);
// MUTATE_REPORT names a narrowed run's reports (reports/mutation/<name>.json and .html), so runs
// over parts of the tree, one after another, each keep theirs.
const report = process.env.MUTATE_REPORT ?? "index";
// MUTATE_TESTS limits the tests a run may use (globs, comma-separated), e.g. a folder's mutants
// against that folder's test files: code every test passes through (the ledger, API-key
// authentication) would otherwise run the whole suite for each surviving mutant. A mutant such a
// run kills, the full suite kills too; the score is a floor.
const testFiles = process.env.MUTATE_TESTS ? process.env.MUTATE_TESTS.split(",") : undefined;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutate.config.ts" },
  ...(testFiles ? { testFiles } : {}),
  // Schemas are data the contract tests pin as a whole; mutating their messages says little.
  mutate: [...mutate, "!**/*.test.ts", "!**/schemas.ts", "!**/protocol2-schemas.ts"],
  coverageAnalysis: "perTest",
  // `// @ts-nocheck` on the files that may be mutated (the build type-checks them, and mutated code
  // does not type-check), not on every TypeScript file, which would change the generated SDK types
  // a test compares with a fresh generation.
  disableTypeChecks: "{core,payments}/**/*.ts",
  // Module-level constants run once per test file; their mutants would need the whole suite each.
  ignoreStatic: true,
  concurrency: 1,
  timeoutMS: 60_000,
  // The first run of the whole suite with coverage takes about 4 minutes on an idle two-core
  // machine; more beside other work.
  dryRunTimeoutMinutes: 30,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: `reports/mutation/${report}.html` },
  jsonReporter: { fileName: `reports/mutation/${report}.json` },
  thresholds: { high: 90, low: 85, break: null },
  tempDirName: ".stryker-tmp",
  // With --incremental, a rerun tests only the mutants whose code or covering tests changed.
  incrementalFile: `reports/mutation/${report}-incremental.json`,
};
