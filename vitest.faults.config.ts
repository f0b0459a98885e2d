import { defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// The fault suite (`npm run test:faults`): it cuts PostgreSQL, kills processes and hangs
// receivers, so it needs TEST_DATABASE_URL and runs its files one at a time (they measure time).
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/faults/**/*.test.ts"],
    exclude: [],
    fileParallelism: false,
    testTimeout: 180_000,
  },
});
