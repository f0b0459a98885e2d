import { PeriodQuery } from "../../core/billing/periods.js";
import { getBalance } from "../../core/billing/reports.js";
import { BalanceReport, LedgerTransaction, TransactionsQuery, UsageReport } from "../../core/billing/schemas.js";
import { getUsage, listTransactions } from "../../core/billing/usage-reports.js";
import { listOf } from "../../core/schemas/common.js";
import { defineTool, NoInput } from "../tool.js";

export const billingTools = [
  defineTool({
    name: "get_balance",
    title: "Get the balance and prices",
    description:
      "The prepaid balance in USD and the rate card: the monthly price of each kind of number, per-minute call rates and the price of a received text.",
    input: [NoInput],
    output: BalanceReport,
    hints: { readOnly: true },
    run: ({ core, accountId }) => getBalance(core, accountId),
  }),
  defineTool({
    name: "get_usage",
    title: "Get usage for a period",
    description:
      "Calls (count, billed minutes), texts received and numbers bought or renewed in a period: the current day, week, month (default) or year, or from/to.",
    input: [PeriodQuery],
    output: UsageReport,
    hints: { readOnly: true },
    run: ({ core, accountId }, args) => getUsage(core, accountId, args),
  }),
  defineTool({
    name: "list_transactions",
    title: "List ledger entries",
    description: "Every credit and charge, newest first, with the balance after each: what each call, number and text cost.",
    input: [TransactionsQuery],
    output: listOf(LedgerTransaction),
    hints: { readOnly: true },
    run: ({ core, accountId }, args) => listTransactions(core, accountId, args),
  }),
];
