import { verifyCall } from "../../core/billing/call-verification.js";
import { PeriodQuery } from "../../core/billing/periods.js";
import { getBalance, getBillingSummary, getExpenditure, listCallExpenditure, listNumberExpenditure } from "../../core/billing/reports.js";
import {
  BalanceReport,
  BillingSummary,
  CallExpenditure,
  CallVerification,
  ExpenditureReport,
  LedgerTransaction,
  NumberExpenditure,
  PagedPeriodQuery,
  SummaryQuery,
  TransactionsQuery,
  UsageReport,
  VerifyCallParams,
} from "../../core/billing/schemas.js";
import { getUsage, listTransactions } from "../../core/billing/usage-reports.js";
import { listOf } from "../../core/schemas/common.js";
import { defineRoute } from "../http/route.js";

const tags = ["Billing"];

const PERIOD_HELP =
  "The period is `period` (`day`, `week` from Monday, `month`, `year`: the current one in UTC, from its start up to now; default `month`) " +
  "or an explicit range `from` (inclusive) and `to` (exclusive), ISO dates or date-times, at most 366 days apart.";

/** Balance, spend and usage reports, every figure computed from the account's ledger. */
export const billingRoutes = [
  defineRoute({
    operationId: "getBalance",
    method: "get",
    path: "/v1/billing/balance",
    summary: "Balance and rate card",
    tags,
    auth: "api_key",
    response: { status: 200, description: "The prepaid balance and the prices in force", schema: BalanceReport },
    handler: ({ core, auth }) => getBalance(core, auth.accountId),
  }),
  defineRoute({
    operationId: "getExpenditure",
    method: "get",
    path: "/v1/billing/expenditure",
    summary: "Spend by category for a period",
    description: `Spend on numbers, calls and texts (charges less refunds), and credits received. ${PERIOD_HELP}`,
    tags,
    auth: "api_key",
    query: PeriodQuery,
    response: { status: 200, description: "Spend and credits in the period", schema: ExpenditureReport },
    handler: ({ core, auth, query }) => getExpenditure(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "listCallExpenditure",
    method: "get",
    path: "/v1/billing/expenditure/calls",
    summary: "Per-call charges",
    description: `Each call with ledger rows in the period, newest first. ${PERIOD_HELP}`,
    tags,
    auth: "api_key",
    query: PagedPeriodQuery,
    response: {
      status: 200,
      description: "A page of calls and what each cost in the period",
      schema: listOf(CallExpenditure).meta({ id: "CallExpenditureList" }),
    },
    handler: ({ core, auth, query }) => listCallExpenditure(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "listNumberExpenditure",
    method: "get",
    path: "/v1/billing/expenditure/numbers",
    summary: "Per-number charges",
    description: `Each number with purchase or renewal charges in the period, newest first. ${PERIOD_HELP}`,
    tags,
    auth: "api_key",
    query: PagedPeriodQuery,
    response: {
      status: 200,
      description: "A page of numbers and what each cost in the period",
      schema: listOf(NumberExpenditure).meta({ id: "NumberExpenditureList" }),
    },
    handler: ({ core, auth, query }) => listNumberExpenditure(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "getBillingSummary",
    method: "get",
    path: "/v1/billing/summary",
    summary: "Monthly totals",
    description: "Credits, spend and net for each of the last `months` calendar months (UTC), the current one included, oldest first.",
    tags,
    auth: "api_key",
    query: SummaryQuery,
    response: { status: 200, description: "One entry per month, empty months as zeros", schema: BillingSummary },
    handler: ({ core, auth, query }) => getBillingSummary(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "verifyCallCharge",
    method: "get",
    path: "/v1/billing/verify/{call_id}",
    summary: "Check the deduction for one call",
    description:
      "The call's rate, billed seconds and every ledger row of it. `agrees` is true when the rows add up to billed_seconds × rate (once ended) " +
      "and to the call's own running total.",
    tags,
    auth: "api_key",
    params: VerifyCallParams,
    response: { status: 200, description: "The call's charges, checked", schema: CallVerification },
    errors: [404],
    handler: ({ core, auth, params }) => verifyCall(core, auth.accountId, params.call_id),
  }),
  defineRoute({
    operationId: "getUsage",
    method: "get",
    path: "/v1/usage",
    summary: "Usage statistics for a period",
    description: `Calls, billed seconds, texts received, numbers bought and renewed, counted from the ledger. ${PERIOD_HELP}`,
    tags,
    auth: "api_key",
    query: PeriodQuery,
    response: { status: 200, description: "Usage in the period", schema: UsageReport },
    handler: ({ core, auth, query }) => getUsage(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "listTransactions",
    method: "get",
    path: "/v1/usage/transactions",
    summary: "Ledger",
    description:
      "Every credit and debit, newest first, with the balance after it. Optionally one `category`, and a `period` or `from`/`to` range (default: all).",
    tags,
    auth: "api_key",
    query: TransactionsQuery,
    response: { status: 200, description: "A page of ledger rows", schema: listOf(LedgerTransaction).meta({ id: "LedgerTransactionList" }) },
    handler: ({ core, auth, query }) => listTransactions(core, auth.accountId, query),
  }),
];
