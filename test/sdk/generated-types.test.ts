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

  it("leaves no request field or parameter with a default required, on any route", () => {
    // openapi-typescript makes a field optional exactly when it is not in `required`, so this
    // covers every route's generated request type, not only the ones spelled out below.
    const doc = document as { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };
    const resolve = (schema: any): any => (schema?.$ref ? doc.components.schemas[String(schema.$ref).split("/").pop()!] : schema);
    const requiredWithDefault: string[] = [];
    let defaulted = 0;
    const visit = (schema: any, where: string): void => {
      const s = resolve(schema);
      if (!s) return;
      for (const part of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) visit(part, where);
      for (const [name, property] of Object.entries<any>(s.properties ?? {})) {
        if (property?.default === undefined && resolve(property)?.default === undefined) continue;
        defaulted += 1;
        if ((s.required ?? []).includes(name)) requiredWithDefault.push(`${where} ${name}`);
      }
    };
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        visit(operation?.requestBody?.content?.["application/json"]?.schema, `${method} ${path}`);
        for (const parameter of (operation?.parameters ?? []).map(resolve)) {
          if (parameter.schema?.default === undefined) continue;
          defaulted += 1;
          if (parameter.required) requiredWithDefault.push(`${method} ${path} ?${parameter.name}`);
        }
      }
    }
    expect(defaulted).toBeGreaterThan(20);
    expect(requiredWithDefault).toEqual([]);
  });

  it("keeps request fields that have defaults optional", async () => {
    const committed = readFileSync(GENERATED_TYPES_PATH, "utf8");
    const push = /ContextPush: \{([\s\S]*?)\n {8}\};/.exec(committed)?.[1] ?? "";
    expect(push).toMatch(/final\?: boolean;/);
    expect(push).toMatch(/end_call\?: boolean;/);
    // text is optional since a turn may be answered by a transfer alone (transfer_to).
    expect(push).toMatch(/text\?: string;/);
    expect(push).toMatch(/transfer_to\?: string;/);
    const transfer = /TransferRequest: \{([\s\S]*?)\n {8}\};/.exec(committed)?.[1] ?? "";
    expect(transfer).toMatch(/to_number: string;/);
    expect(transfer).toMatch(/mode\?: "cold" \| "warm";/);
  });
});
