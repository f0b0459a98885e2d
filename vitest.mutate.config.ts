import { configDefaults, defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

// The suite StrykerJS runs (stryker.config.mjs): the in-process tests. Files that only drive the
// service in other processes (the browser, the CLI, the examples, `npm start`) cannot see a
// mutant in this one, so they would only slow every run down.
// Test files share their modules (isolate: false): each mutant reruns the few files that cover it,
// and importing the service afresh for each file was most of a mutant's time. Mutants switch at
// run time (Stryker's mutation switching), so a module loaded once serves every mutant.
export default mergeConfig(
  base,
  defineConfig({
    test: { isolate: false, exclude: [...configDefaults.exclude, "test/faults/**", "test/browser/**", "test/cli/**", "test/examples/**", "test/e2e/**"] },
  }),
);
