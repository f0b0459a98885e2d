// Mutation testing (npm run mutate; not in CI: it takes hours on two cores). Stryker changes the
// money, payment, turn, auth, webhook and relay logic one small edit at a time and runs the tests
// that cover each edit; an edit no test notices is a survivor, listed with its place in
// reports/mutation/. The score is reported per folder.
// MUTATE narrows a run to some files (a glob, comma-separated), e.g. MUTATE=core/billing/money.ts.
// Each folder and the test files that can catch its mutants (tests that spawn a service process
// cannot: Stryker switches mutants in its own process).
const folders = {
  // A transfer's minutes are billed where a transfer is tested: on the sandbox, on Twilio, by a wallet.
  "core/billing": [
    "test/billing/**/*.test.ts",
    "test/numbers/**/*.test.ts",
    "test/payments/leases.test.ts",
    "test/agents/delete-agent-numbers.test.ts",
    "test/calls/transfer.test.ts",
    "test/calls/transfer.error.test.ts",
    "test/twilio/transfer.test.ts",
    "test/payments/wallet-transfer.test.ts",
  ],
  // A malformed payment credential is pinned where it is attacked; paid MCP tools take the same engine.
  payments: ["test/payments/**/*.test.ts", "test/hostile/payment-signatures.test.ts", "test/mcp-payments/**/*.test.ts"],
  "core/relay": ["test/relay/**/*.test.ts", "test/events/**/*.test.ts", "test/sdk/relay-client.test.ts", "test/sdk/turns.test.ts"],
  // turn-staleness.test.ts holds protocol 2's stale and amended tasks.
  "core/webhooks": ["test/webhooks/**/*.test.ts", "core/webhooks/**/*.test.ts", "test/agents/**/*.test.ts", "test/calls/turn-staleness.test.ts"],
  // Call control (say, digits, transfer, voicemail, recording) is also tested through the SDK, the
  // MCP tools and a wallet; the conversation window where a long call is attacked; talk time where it is billed.
  "core/calls": [
    "test/calls/**/*.test.ts",
    "test/twilio/**/*.test.ts",
    "test/sdk/turns.test.ts",
    "test/sdk/say-and-digits.test.ts",
    "test/sdk/transfer.test.ts",
    "test/sdk/voicemail-and-recording.test.ts",
    "test/webhooks/protocol2.test.ts",
    "test/events/**/*.test.ts",
    "test/mcp/tools.test.ts",
    "test/mcp/place-call-options.test.ts",
    "test/mcp/say-and-digits.test.ts",
    "test/hostile/conversation-size.test.ts",
    "test/billing/call-billing-edges.test.ts",
    "test/billing/charges.test.ts",
    "test/billing/short-calls.test.ts",
    "test/payments/wallet-hangup.test.ts",
    "test/payments/wallet-transfer.test.ts",
    "test/payments/wallet-voicemail-and-recording.test.ts",
  ],
  // Agent tokens, revocation and code guessing are also pinned where they are attacked (test/hostile/) and where a wallet gets its first token.
  "core/auth": [
    "test/auth/**/*.test.ts",
    "test/security.test.ts",
    "test/tenancy.test.ts",
    "test/mcp/auth.test.ts",
    "test/hostile/agent-tokens.test.ts",
    "test/hostile/revocation.test.ts",
    "test/hostile/verify-limit.test.ts",
    "test/payments/no-signup.test.ts",
    // The OAuth sign-in pages are where an e-mail code signs in and an AgentID sign-in is claimed.
    "test/oauth/agentid-sign-in.test.ts",
    "test/oauth/sign-in-pages.test.ts",
  ],
};
// MUTATE_FOLDER runs one folder against its own tests, its reports named after it (core/calls →
// reports/mutation/calls.json): code every test passes through (the ledger, API-key
// authentication) would otherwise run the whole suite for each surviving mutant. A mutant such a
// run kills, the full suite kills too; the score is a floor.
const folder = process.env.MUTATE_FOLDER;
if (folder !== undefined && !(folder in folders)) throw new Error(`MUTATE_FOLDER must be one of ${Object.keys(folders).join(", ")}`);
const mutate = process.env.MUTATE ? process.env.MUTATE.split(",") : (folder ? [folder] : Object.keys(folders)).map((f) => `${f}/**/*.ts`);
// MUTATE_REPORT names a narrowed run's reports (reports/mutation/<name>.json and .html), so runs
// over parts of the tree, one after another, each keep theirs.
const report = process.env.MUTATE_REPORT ?? (folder ? folder.split("/").at(-1) : "index");
// MUTATE_TESTS limits the tests a run may use (globs, comma-separated).
const testFiles = process.env.MUTATE_TESTS ? process.env.MUTATE_TESTS.split(",") : folder ? folders[folder] : undefined;

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
