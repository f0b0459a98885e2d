import { join } from "node:path";
import madge from "madge";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../harness/process.js";

// The product's folders (the service, its CLI and the SDK); tests and benchmarks may import across them freely.
const PRODUCT = ["core", "gateway", "payments", "mcp", "discovery", "bin", "cli", "sdk/src"];

describe("the shape of the code", () => {
  it("has no import circles in the product's folders", { timeout: 60_000 }, async () => {
    const graph = await madge(
      PRODUCT.map((folder) => join(projectRoot, folder)),
      { baseDir: projectRoot, fileExtensions: ["ts"], tsConfig: join(projectRoot, "tsconfig.json"), excludeRegExp: [/\.test\.ts$/] },
    );
    expect(graph.circular()).toEqual([]);
  });
});
