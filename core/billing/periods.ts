import { and, gte, lt, lte, type SQL } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { AppError, type FieldError } from "../errors.js";

/** The calendar periods a report can cover, each from its start (UTC) up to now. */
export const REPORT_PERIODS = ["day", "week", "month", "year"] as const;
export type ReportPeriodName = (typeof REPORT_PERIODS)[number];

/** The longest explicit range a report accepts: a leap year. */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

const isoDate = z.iso.date();
const isoDateTime = z.iso.datetime({ offset: true });

// Dates before the epoch hold no ledger rows; PostgreSQL cannot read year 0 or a five-digit year.
const EARLIEST = 0;
const LATEST = Date.UTC(10_000, 0, 1);

const RangeBound = z
  .string()
  .refine((s) => isoDate.safeParse(s).success || isoDateTime.safeParse(s).success, {
    message: "must be an ISO 8601 date (2026-11-01) or a date-time with Z or an offset (2026-11-01T09:30:00Z)",
    abort: true,
  })
  .refine((s) => Date.parse(s) >= EARLIEST && Date.parse(s) < LATEST, "must fall in the years 1970 to 9999 (UTC)");

// How the documentation states RangeBound: a date or an RFC 3339 date-time (which needs Z or an offset).
const RANGE_FORMATS = [{ format: "date" }, { format: "date-time" }];

/**
 * The period fields of a report's query, to spread into a strict query schema (an object with
 * refinements cannot be extended, so the rules between fields are checked by `resolvePeriod`).
 */
export const PeriodFields = {
  period: z.enum(REPORT_PERIODS).optional().meta({
    description: "The current calendar period in UTC, from its start up to now (day, week from Monday, month, year). Default month; not with from/to.",
  }),
  from: RangeBound.optional().meta({
    description:
      "Start of an explicit range, inclusive: an ISO 8601 date (midnight UTC) or date-time with Z or an offset, 1970 to 9999. Only together with `to`, and not with `period`.",
    example: "2026-11-01",
    anyOf: RANGE_FORMATS,
  }),
  to: RangeBound.optional().meta({
    description: `End of an explicit range, exclusive: a date or date-time like \`from\`, after it and at most ${MAX_RANGE_DAYS} days from it. Only together with \`from\`.`,
    example: "2026-12-01",
    anyOf: RANGE_FORMATS,
  }),
};

/** A report's query when it has only a period. */
export const PeriodQuery = z.strictObject(PeriodFields);
export type PeriodQuery = z.infer<typeof PeriodQuery>;

/** The time a report covers: `start` inclusive; `end` exclusive, except that a current period includes now. */
export interface ReportPeriod {
  start: Date;
  end: Date;
  /** `2026-11-22`, `2026-W47`, `2026-11`, `2026`, or `<start>/<end>` for an explicit range. */
  label: string;
  /** True for a current period: a row stamped at `end` (now) is in it. */
  endInclusive: boolean;
}

/**
 * The period a report covers: the current `period` up to `now`, or the explicit range `from`
 * to `to`, or, when neither is given, the current `fallback` period. Rules between fields that
 * the schema cannot express are a 422 naming the field.
 */
export function resolvePeriod(now: Date, query: PeriodQuery, fallback: ReportPeriodName = "month"): ReportPeriod {
  const range = checkRange(query);
  if (range) return { start: range.from, end: range.to, label: `${range.from.toISOString()}/${range.to.toISOString()}`, endInclusive: false };
  return currentPeriod(now, query.period ?? fallback);
}

/** As `resolvePeriod`, but undefined when the query names no period at all (the report is not limited). */
export function resolveOptionalPeriod(now: Date, query: PeriodQuery): ReportPeriod | undefined {
  if (query.period === undefined && query.from === undefined && query.to === undefined) return undefined;
  return resolvePeriod(now, query);
}

/** The current calendar `period` in UTC, from its start up to and including `now`. */
export function currentPeriod(now: Date, period: ReportPeriodName): ReportPeriod {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const today = Date.UTC(y, m, now.getUTCDate());
  let start: number;
  let label: string;
  switch (period) {
    case "day":
      start = today;
      label = new Date(start).toISOString().slice(0, 10);
      break;
    case "week":
      // getUTCDay() is 0 on Sunday; weeks start on Monday, as ISO 8601 has them.
      start = today - ((now.getUTCDay() + 6) % 7) * DAY_MS;
      label = isoWeekLabel(start);
      break;
    case "month":
      start = Date.UTC(y, m, 1);
      label = monthLabel(new Date(start));
      break;
    case "year":
      start = Date.UTC(y, 0, 1);
      label = String(y);
      break;
  }
  return { start: new Date(start), end: now, label, endInclusive: true };
}

/** `2026-11` for a moment in November 2026 (UTC). */
export function monthLabel(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** `2026-W47` for the week starting on the Monday at `mondayMs` (the ISO year is the Thursday's). */
function isoWeekLabel(mondayMs: number): string {
  const thursday = new Date(mondayMs + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1;
  return `${year}-W${String(week).padStart(2, "0")}`;
}

function checkRange(query: PeriodQuery): { from: Date; to: Date } | undefined {
  const errors: FieldError[] = [];
  const { from, to } = query;
  if (query.period !== undefined && (from !== undefined || to !== undefined)) {
    errors.push({ field: "period", message: "cannot be combined with from and to: give a period or a range" });
  } else if (from !== undefined && to === undefined) {
    errors.push({ field: "to", message: "is required with from" });
  } else if (to !== undefined && from === undefined) {
    errors.push({ field: "from", message: "is required with to" });
  } else if (from !== undefined && to !== undefined) {
    const range = { from: new Date(Date.parse(from)), to: new Date(Date.parse(to)) };
    if (range.to <= range.from) errors.push({ field: "to", message: "must be after from" });
    else if (range.to.getTime() - range.from.getTime() > MAX_RANGE_DAYS * DAY_MS)
      errors.push({ field: "to", message: `must be at most ${MAX_RANGE_DAYS} days after from` });
    else return range;
  } else {
    return undefined;
  }
  throw new AppError("validation_error", `The request has 1 invalid field: ${errors[0]!.field}.`, { errors });
}

/** The condition "column falls in the period". */
export function withinPeriod(column: PgColumn, period: ReportPeriod): SQL {
  return and(gte(column, period.start), period.endInclusive ? lte(column, period.end) : lt(column, period.end))!;
}
