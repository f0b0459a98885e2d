import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

// Files whose service always runs on the embedded database (they start it as `npm start` does, with
// DATA_DIR) or that open no database at all: a run on PostgreSQL (TEST_DATABASE_URL) would repeat
// them unchanged, so it leaves them to the embedded run. The browser tests too: they drive Chromium
// against the page and the relay, and nothing in them depends on the database (relay tickets across
// processes on PostgreSQL are test/relay/tickets.test.ts).
const EMBEDDED_ONLY = [
  "core/ids.test.ts",
  "test/browser/browser.test.ts",
  "gateway/ws/upgrades.test.ts",
  "test/bus/local-bus.test.ts",
  "test/e2e/conversation.test.ts",
  "test/e2e/npm-start.test.ts",
  "test/e2e/readme-first-agent.test.ts",
  "test/e2e/restart-build.test.ts",
  "test/sdk/generated-types.test.ts",
  "test/shape/bench-and-test-apart.test.ts",
  "test/shape/import-circles.test.ts",
  "test/shape/patches.test.ts",
  "test/twilio/carrier-check.test.ts",
  "test/twilio/stand-in.test.ts",
];

export default defineConfig({
  // Tests use the SDK's TypeScript source, as the type-checker does (see tsconfig.json).
  resolve: { alias: { "@agentline/sdk": fileURLToPath(new URL("./sdk/src/index.ts", import.meta.url)) } },
  test: {
    include: [
      "test/**/*.test.ts",
      "core/**/*.test.ts",
      "gateway/**/*.test.ts",
      "discovery/**/*.test.ts",
      "payments/**/*.test.ts",
      "mcp/**/*.test.ts",
      "sdk/src/**/*.test.ts",
    ],
    // The fault suite has its own config and script (npm run test:faults).
    exclude: [...configDefaults.exclude, "test/faults/**", ...(process.env.TEST_DATABASE_URL ? EMBEDDED_ONLY : [])],
    globalSetup: ["test/support/global-setup.ts"],
    // Fails the very test that sent the Twilio stand-in a request Twilio's OpenAPI does not allow.
    setupFiles: ["test/support/twilio/fail-fast.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Test files share this 2-core machine with the servers they start.
    maxWorkers: 2,
  },
});
