import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "core/**/*.test.ts", "gateway/**/*.test.ts", "discovery/**/*.test.ts", "payments/**/*.test.ts", "mcp/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Test files share this 2-core machine with the servers they start.
    maxWorkers: 2,
  },
});
