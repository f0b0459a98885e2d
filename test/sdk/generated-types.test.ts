import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { GENERATED_TYPES_PATH, liveOpenApiDocument, sdkTypesFor } from "../../scripts/sdk-generate.js";

let document: Record<string, unknown>;
beforeAll(async () => {
  document = await liveOpenApiDocument();
});

describe("the SDK's generated types", () => {
  it("match what the service's live /openapi.json generates today (run `npm run sdk:generate` after changing a route)", { timeout: 60_000 }, async () => {
    const regenerated = await sdkTypesFor(document);
    const committed = readFileSync(GENERATED_TYPES_PATH, "utf8");
    // Compared line by line so a failure shows where the routes and the SDK disagree.
    expect(committed.split("\n")).toEqual(regenerated.split("\n"));
  });

  it("would notice a route the SDK does not know", { timeout: 60_000 }, async () => {
    const changed = structuredClone(document);
    (changed.paths as Record<string, unknown>)["/v1/brand-new"] = { get: { operationId: "brandNew", responses: { 200: { description: "ok" } } } };
    expect(await sdkTypesFor(changed)).not.toBe(readFileSync(GENERATED_TYPES_PATH, "utf8"));
  });

  it("keeps request fields that have defaults optional", async () => {
    const committed = readFileSync(GENERATED_TYPES_PATH, "utf8");
    const push = /ContextPush: \{([\s\S]*?)\n {8}\};/.exec(committed)?.[1] ?? "";
    expect(push).toMatch(/final\?: boolean;/);
    expect(push).toMatch(/end_call\?: boolean;/);
    expect(push).toMatch(/text: string;/);
  });
});
