import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PeriodQuery, resolvePeriod } from "../../core/billing/periods.js";
import type { AppError } from "../../core/errors.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

// The edges of a report's period that report-validation.test.ts does not pin: the exact last
// moment a bound may name, and the detail of a 422 for a rule between fields.
let service: TestService;
let api: Api;
beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
});
afterAll(() => service?.stop());

const NOW = new Date("2030-03-13T15:00:00.000Z");

/** The fields a query is refused on, by the schema alone. */
const refusedFields = (query: Record<string, string>) => {
  const parsed = PeriodQuery.safeParse(query);
  return parsed.success ? [] : parsed.error.issues.map((issue) => issue.path.join("."));
};

describe("the years a bound may name", () => {
  it("ends at the last millisecond of 9999 in UTC, however the bound is written", () => {
    expect(refusedFields({ from: "9999-12-01", to: "9999-12-31T23:59:59.999Z" })).toEqual([]);
    expect(refusedFields({ from: "9999-12-01", to: "9999-12-31T18:59:59.999-05:00" })).toEqual([]);
    // 19:00 at -05:00 is the first moment of the year 10000 in UTC.
    expect(refusedFields({ from: "9999-12-01", to: "9999-12-31T19:00:00-05:00" })).toEqual(["to"]);
    expect(refusedFields({ from: "10000-01-01T00:00:00Z", to: "9999-12-31" })).toContain("from");
  });

  it("starts at the first millisecond of 1970 in UTC", () => {
    expect(refusedFields({ from: "1970-01-01T00:00:00.000Z", to: "1970-02-01" })).toEqual([]);
    expect(refusedFields({ from: "1969-12-31T23:59:59.999Z", to: "1970-02-01" })).toEqual(["from"]);
    expect(refusedFields({ from: "1970-01-01T00:59:59.999+01:00", to: "1970-02-01" })).toEqual(["from"]);
  });

  it("is a 422 naming `to` when the range ends at the first moment of 10000", async () => {
    const res = await api.get("/v1/usage", { query: { from: "9999-12-31", to: "9999-12-31T19:00:00-05:00" } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field: "to", in: "query", message: "must fall in the years 1970 to 9999 (UTC)" }]);
  });
});

describe("a rule between fields", () => {
  const refusal = (query: PeriodQuery) => {
    try {
      resolvePeriod(NOW, query);
    } catch (error) {
      const e = error as AppError;
      return { code: e.code, status: e.status, detail: e.detail, fields: e.errors?.map((f) => f.field) };
    }
    throw new Error(`${JSON.stringify(query)} was accepted`);
  };

  it.each([
    [{ from: "2030-02-01", to: "2030-01-01" }, "to"],
    [{ from: "2030-01-01" }, "to"],
    [{ to: "2030-01-01" }, "from"],
    [{ period: "day", to: "2030-01-01" }, "period"],
  ] as const)("%o is a 422 whose detail names %s", (query, field) => {
    const refused = refusal(query as PeriodQuery);
    expect(refused).toEqual({ code: "validation_error", status: 422, detail: `The request has 1 invalid field: ${field}.`, fields: [field] });
  });

  it("says so in the API answer's detail too", async () => {
    const res = await api.get("/v1/billing/expenditure", { query: { from: "2030-02-01", to: "2030-01-01" } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe("The request has 1 invalid field: to.");
  });
});
