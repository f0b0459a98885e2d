import { configDefaults, defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

// The suite StrykerJS runs (stryker.config.mjs): the in-process tests. Files that only drive the
// service in other processes (the browser, the CLI, the examples, `npm start`) cannot see a
// mutant in this one, so they would only slow every run down.
export default mergeConfig(
  base,
  defineConfig({
    test: { exclude: [...configDefaults.exclude, "test/faults/**", "test/browser/**", "test/cli/**", "test/examples/**", "test/e2e/**"] },
  }),
);
