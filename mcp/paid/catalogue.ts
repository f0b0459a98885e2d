import { z } from "zod";
import { formatMicros } from "../../core/billing/money.js";
import type { Core } from "../../core/context.js";
import type { Route } from "../../gateway/http/route.js";
import { topupRoutes } from "../../gateway/routes/topup.js";
import { x402Routes } from "../../gateway/routes/x402.js";
import type { Tool } from "../tool.js";

/**
 * The paid MCP tools (/mcp/x402) are the no-signup route family, not a second copy of it: each
 * tool is one /v1/x402 route (or the top-up) under the name /mcp gives the same act. Its input is
 * the route's schemas, its output the route's response, its price the route's price, and it
 * runs the route's handler for the paying wallet's account.
 */
export const PAID_TOOL_NAMES: Record<string, string> = {
  walletBuyNumber: "buy_number",
  walletListNumbers: "list_numbers",
  walletRenewNumber: "renew_number",
  walletGetAgent: "get_agent",
  walletUpdateAgent: "update_agent",
  walletPlaceCall: "place_call",
  walletHangupCall: "hang_up_call",
  walletSayOnCall: "say_on_call",
  walletSendDigits: "send_digits",
  walletTransferCall: "transfer_call",
  walletGetTranscript: "get_transcript",
  walletGetWebhook: "get_webhook",
  walletSetWebhook: "set_webhook",
  walletTestWebhook: "test_webhook",
  walletPollEvents: "poll_events",
  walletSendText: "send_text",
  topup: "top_up",
};

/** The routes that reach outside the account: the telephone network, a person on a call, a webhook URL. */
const OPEN_WORLD = new Set([
  "walletBuyNumber",
  "walletPlaceCall",
  "walletTransferCall",
  "walletSayOnCall",
  "walletSendDigits",
  "walletSendText",
  "walletTestWebhook",
]);

/** Where a paid result hands back the wallet's agent_token (also in the structured result). */
export const AGENT_TOKEN_META = "agentline/agent_token";

/** The agent token a paid result hands back, beside the route's own answer. */
const AgentTokenField = z
  .string()
  .nullable()
  .optional()
  .meta({
    description:
      "The wallet's agent_token, in the first result its payment bought (shown once): send it as 'Authorization: Bearer at_...' to /mcp/x402 " +
      "(tools its balance covers run without paying) and to /mcp (every tool, for this wallet's account).",
  });

/** A paid tool: an MCP tool (for listing and checking arguments) and the route behind it. */
export interface PaidTool extends Tool {
  route: Route;
  operationId: string;
  /** A route that answers a list (a transcript) answers the tool as an object: the path parameters, and the list under this key. */
  wrap?: string;
}

/**
 * A tool answers an object (MCP's structured output); a route answering something else (a
 * transcript, an array) is answered as its path parameters and the answer under its schema's
 * name, as /mcp's get_transcript answers { call_id, transcript }.
 */
function objectOutput(route: Route): { schema: z.ZodObject; wrap?: string } {
  const schema = route.response.schema;
  if (schema instanceof z.ZodObject) return { schema };
  const id = (schema?.meta() as { id?: string } | undefined)?.id;
  if (!schema || !id) throw new Error(`paid route ${route.operationId} answers neither an object nor a named schema`);
  const wrap = id.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  return { schema: (route.params ?? z.object({})).extend({ [wrap]: schema }), wrap };
}

const PAYS =
  "Pay in _meta ('x402/payment' or 'org.paymentauth/credential'; unpaid, it answers both challenges), or send the agent_token as Bearer with a balance that covers it.";

/**
 * Where a route's own description speaks HTTP (paths, statuses, headers, an API key), the tool
 * says the same in MCP's terms; every other tool takes its route's words.
 */
const MCP_WORDS: Record<string, string> = {
  walletBuyNumber: "A 30-day lease, extended with renew_number; an unrenewed number is released when its lease ends (event number.released).",
  walletSayOnCall: "Refused (turn_open) while a caller turn waits for its answer, and (call_ended) once the call has ended. Spends nothing, like the reads.",
  walletSendDigits: "`0-9`, `*`, `#`, `w` a half-second pause, at most 32. Spends nothing, like the reads.",
  walletTransferCall: "Cold or warm; the bridged leg is charged per second at the outbound rate from the balance.",
  walletSetWebhook: "Creates or replaces it, keeping its secret unless `secret` or `rotate_secret: true` is sent; the answer shows a new secret once.",
  walletSendText:
    "From the agent's number (or `from_number`, one of its numbers). Each segment is charged from the balance; a recipient who texted STOP is refused (recipient_opted_out).",
  topup:
    "Adds `amount` USD to the balance, always paid: with no credential, to the wallet's own account (made by its first payment), answering a new agent_token; " +
    "with an agent_token as Bearer, to that token's account, answering the same token.",
};

/** What a tool costs, in words: the route's price, fixed or how it is worked out. */
function priceText(route: Route, core: Core): string {
  const price = route.price!;
  const fixed = price.fixed(core);
  if (fixed !== null) return `Price: ${formatMicros(fixed)} USD (${price.description}).`;
  const variants = price.variants?.(core);
  const listed = variants
    ? ` (${Object.entries(variants)
        .map(([name, micros]) => `${name} ${formatMicros(micros)}`)
        .join(", ")} USD)`
    : "";
  // A tool has arguments where a route has a query.
  return `Price: ${price.description.replace(/query `/g, "argument `")}${listed}.`;
}

/** The route's own words for the tool (or MCP_WORDS), without its HTTP sentence on paying (PAYS replaces it). */
function routeWords(route: Route): string {
  const text = (MCP_WORDS[route.operationId] ?? route.description ?? "")
    .replace(/\s*Pay per request with x402 or MPP, or send an agent_token whose balance covers the price\./, "")
    .trim();
  return text ? ` ${text}` : "";
}

function toolOf(route: Route, core: Core): PaidTool {
  const name = PAID_TOOL_NAMES[route.operationId];
  if (!name) throw new Error(`paid route ${route.operationId} has no MCP tool name in PAID_TOOL_NAMES`);
  const output = objectOutput(route);
  const input = [route.params, route.query, route.body].filter((part): part is z.ZodObject => part instanceof z.ZodObject);
  const readOnly = route.method === "get" && !route.consumes;
  return {
    name,
    title: route.summary,
    description: `${route.summary}.${routeWords(route)} ${priceText(route, core)} ${PAYS}`,
    input,
    output: output.schema.extend({ agent_token: AgentTokenField }),
    wrap: output.wrap,
    hints: { readOnly, idempotent: readOnly, destructive: route.operationId === "walletHangupCall", openWorld: OPEN_WORLD.has(route.operationId) },
    // The server runs the route's handler itself (mcp/paid/server.ts): it needs the principal the payment made.
    run: () => Promise.reject(new Error(`${name} runs through its route`)),
    route,
    operationId: route.operationId,
  };
}

const catalogues = new WeakMap<Core, { tools: PaidTool[]; byName: Map<string, PaidTool> }>();

/** The paid tools, built once per service (the prices and top-up bounds come from its configuration). */
export function paidCatalogue(core: Core): { tools: PaidTool[]; byName: Map<string, PaidTool> } {
  let found = catalogues.get(core);
  if (!found) {
    const topup = topupRoutes(core.config.payments).find((route) => route.operationId === "topup")!;
    const tools = [...x402Routes, topup].map((route) => toolOf(route, core));
    found = { tools, byName: new Map(tools.map((tool) => [tool.name, tool])) };
    catalogues.set(core, found);
  }
  return found;
}
