import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PeriodQuery, resolvePeriod } from "../../core/billing/periods.js";
import type { AppError } from "../../core/errors.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

// How the report routes take their queries (core/billing/periods.ts): a malformed period, page or
// parameter is a 422 naming the field, never a 5xx.
let service: TestService;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
});
afterAll(() => service?.stop());

const PERIOD_ROUTES = ["/v1/billing/expenditure", "/v1/billing/expenditure/calls", "/v1/billing/expenditure/numbers", "/v1/usage", "/v1/usage/transactions"];
const PAGED_ROUTES = ["/v1/billing/expenditure/calls", "/v1/billing/expenditure/numbers", "/v1/usage/transactions"];
const ALL_ROUTES = ["/v1/billing/balance", ...PERIOD_ROUTES, "/v1/billing/summary", "/v1/billing/verify/call_00000000000000000000000000"];

async function expect422(path: string, query: Record<string, string>, field: string) {
  const res = await api.get(path, { query });
  expect(res.status, `${path} ${JSON.stringify(query)}`).toBe(422);
  expect(res.body.code).toBe("validation_error");
  expect(
    res.body.errors.map((e: any) => e.field),
    `${path} ${JSON.stringify(query)}`,
  ).toEqual([field]);
  return res.body.errors[0].message as string;
}

const badPeriods: Array<[string, Record<string, string>, string, RegExp]> = [
  ["an unknown period", { period: "fortnight" }, "period", /./],
  ["from without to", { from: "2030-01-01" }, "to", /is required with from/],
  ["to without from", { to: "2030-01-01" }, "from", /is required with to/],
  ["from after to", { from: "2030-02-01", to: "2030-01-01" }, "to", /must be after from/],
  ["an empty range", { from: "2030-02-01", to: "2030-02-01" }, "to", /must be after from/],
  ["a 400-day range", { from: "2029-01-01", to: "2030-02-05" }, "to", /at most 366 days/],
  ["367 days", { from: "2029-03-13", to: "2030-03-15" }, "to", /at most 366 days/],
  ["a period and a range", { period: "month", from: "2030-01-01", to: "2030-02-01" }, "period", /cannot be combined/],
  ["a period and from alone", { period: "day", from: "2030-01-01" }, "period", /cannot be combined/],
  ["a date that does not exist", { from: "2030-02-30", to: "2030-03-01" }, "from", /ISO 8601/],
  ["words", { from: "yesterday", to: "2030-03-01" }, "from", /ISO 8601/],
  ["a date-time without a zone", { from: "2030-01-01T00:00:00", to: "2030-02-01" }, "from", /ISO 8601/],
  ["a bad to", { from: "2030-01-01", to: "2030-13-01" }, "to", /ISO 8601/],
  ["a date before 1970", { from: "1969-12-31", to: "1970-01-02" }, "from", /1970 to 9999/],
  ["a moment past the year 9999 in UTC", { from: "9999-12-31", to: "9999-12-31T23:00:00-05:00" }, "to", /1970 to 9999/],
  ["an unknown parameter", { month: "2030-01" }, "month", /is not a recognised query parameter/],
];

describe("report queries", () => {
  for (const path of PERIOD_ROUTES) {
    it.each(badPeriods)(`${path}: %s is a 422 naming the field`, async (_label, query, field, message) => {
      expect(await expect422(path, query, field)).toMatch(message);
    });
  }

  it.each(PAGED_ROUTES)("%s: limit and offset out of range are 422s", async (path) => {
    await expect422(path, { limit: "0" }, "limit");
    await expect422(path, { limit: "101" }, "limit");
    await expect422(path, { offset: "-1" }, "offset");
    await expect422(path, { limit: "ten" }, "limit");
  });

  it.each([["0"], ["25"], ["abc"], ["1.5"], ["-1"], [""]])("summary: months=%j is a 422", async (months) => {
    await expect422("/v1/billing/summary", { months }, "months");
  });

  it("summary takes no period, and transactions no unknown category", async () => {
    await expect422("/v1/billing/summary", { period: "month" }, "period");
    await expect422("/v1/usage/transactions", { category: "refund" }, "category");
  });

  it("a repeated parameter is a 422, not a 500", async () => {
    const res = await api.get("/v1/billing/expenditure?period=day&period=week");
    expect(res.status).toBe(422);
    const range = await api.get("/v1/usage?from=2030-01-01&from=2030-01-02&to=2030-02-01");
    expect(range.status).toBe(422);
  });

  it("accepts every period, a range, and the bounds of months", async () => {
    for (const period of ["day", "week", "month", "year"]) {
      for (const path of PERIOD_ROUTES) expect((await api.get(path, { query: { period } })).status, `${path} ${period}`).toBe(200);
    }
    for (const path of PERIOD_ROUTES) expect((await api.get(path, { query: { from: "2030-01-01", to: "2030-02-01T12:30:00.5-05:00" } })).status).toBe(200);
    // The extremes of the accepted years reach the database without error.
    for (const [from, to] of [
      ["1970-01-01", "1970-02-01"],
      ["9999-12-01", "9999-12-31T23:59:59.999Z"],
    ]) {
      for (const path of PERIOD_ROUTES) expect((await api.get(path, { query: { from: from!, to: to! } })).status, `${path} ${from}`).toBe(200);
    }
    expect((await api.get("/v1/billing/summary", { query: { months: 1 } })).body.months).toHaveLength(1);
    expect((await api.get("/v1/billing/summary", { query: { months: 24 } })).body.months).toHaveLength(24);
  });

  it.each(ALL_ROUTES)("%s answers 401 without a key", async (path) => {
    const res = await api.get(path, { key: null });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("unauthorized");
  });
});

describe("never a 5xx (property)", () => {
  const dateish = fc.oneof(
    fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }).map((d) => d.toISOString()),
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    fc.string({ unit: "binary" }),
    fc.constantFrom("0000-01-01", "2030-02-29", "9999-12-31T23:59:59-14:00", "2030-01-01T00:00:00+99:99"),
  );
  const query = fc.record(
    {
      period: fc.oneof(fc.constantFrom("day", "week", "month", "year"), fc.string({ unit: "binary" })),
      from: dateish,
      to: dateish,
      months: fc.oneof(fc.integer({ min: -5, max: 30 }).map(String), fc.string({ unit: "binary" })),
      limit: fc.oneof(fc.integer().map(String), fc.string()),
      category: fc.oneof(fc.constantFrom("call", "sms", "topup"), fc.string({ unit: "binary" })),
    },
    { requiredKeys: [] },
  );

  it("for any query on every report route", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ALL_ROUTES), query, async (path, q) => {
        const res = await api.get(path, { query: q });
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 300 },
    );
  });
});

// The edges of a report's period, through its schema and resolvePeriod: the exact last moment a
// bound may name, and the detail of a 422 for a rule between fields.
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
