import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  // Tests use the SDK's TypeScript source, as the type-checker does (see tsconfig.json).
  resolve: { alias: { "@agentline/sdk": fileURLToPath(new URL("./sdk/src/index.ts", import.meta.url)) } },
  test: {
    include: ["test/**/*.test.ts", "core/**/*.test.ts", "gateway/**/*.test.ts", "discovery/**/*.test.ts", "payments/**/*.test.ts", "mcp/**/*.test.ts", "sdk/src/**/*.test.ts"],
    // The fault suite has its own config and script (npm run test:faults).
    exclude: [...configDefaults.exclude, "test/faults/**"],
    globalSetup: ["test/support/global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Test files share this 2-core machine with the servers they start.
    maxWorkers: 2,
  },
});
