import { buyNumber, getNumber, listNumbers, reassignNumber, releaseNumber } from "../../core/numbers/numbers.js";
import { BuyNumberBody, ListNumbersQuery, NumberIdParams, PhoneNumberRecord, ReassignQuery } from "../../core/numbers/schemas.js";
import { listOf } from "../../core/schemas/common.js";
import { defineTool } from "../tool.js";

export const numberTools = [
  defineTool({
    name: "list_numbers",
    title: "List phone numbers",
    description: "Lists the account's phone numbers, newest first (active ones unless status is released). Shows which agent answers each.",
    input: [ListNumbersQuery],
    output: listOf(PhoneNumberRecord),
    hints: { readOnly: true },
    run: ({ core, accountId }, args) => listNumbers(core, accountId, args),
  }),
  defineTool({
    name: "buy_number",
    title: "Buy a phone number",
    description:
      "Buys a phone number for an agent and charges its first month to the balance (get_balance shows the price); it renews monthly. " +
      "An agent needs a number before it can place or receive calls.",
    input: [BuyNumberBody],
    output: PhoneNumberRecord,
    hints: { spendsMoney: true, openWorld: true },
    run: ({ core, accountId }, args) => buyNumber(core, accountId, args),
  }),
  defineTool({
    name: "get_number",
    title: "Get a phone number",
    description: "Reads one number by number_id: its agent, status and when it renews.",
    input: [NumberIdParams],
    output: PhoneNumberRecord,
    hints: { readOnly: true },
    run: ({ core, accountId }, args) => getNumber(core, accountId, args.number_id),
  }),
  defineTool({
    name: "reassign_number",
    title: "Move a number to another agent",
    description: "Moves a number to another of the account's agents; calls and texts to it reach that agent from now on.",
    input: [NumberIdParams, ReassignQuery],
    output: PhoneNumberRecord,
    hints: { idempotent: true },
    run: ({ core, accountId }, args) => reassignNumber(core, accountId, args.number_id, args.agent_id),
  }),
  defineTool({
    name: "release_number",
    title: "Release a number, permanently",
    description: "Gives the number up for good: it stops renewing and can never be bought or brought back again. Only when the user asks for it.",
    input: [NumberIdParams],
    output: PhoneNumberRecord,
    hints: { destructive: true, openWorld: true },
    run: ({ core, accountId }, args) => releaseNumber(core, accountId, args.number_id),
  }),
];
