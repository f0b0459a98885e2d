import { z } from "zod";
import { formatMicros } from "../core/billing/money.js";
import type { PaymentSettings } from "../payments/settings.js";

/** A route that charges, with what it charges. */
export interface PaidRoute {
  method: string;
  path: string;
  summary: string;
  fixedMicros: number | null;
  variants: Record<string, number> | undefined;
  priceDescription: string;
}

/** A paid MCP tool (/mcp/x402), with what it charges: its route's price. */
export interface PaidMcpTool {
  tool: string;
  description: string;
  inputSchema: Record<string, unknown>;
  fixedMicros: number | null;
  variants: Record<string, number> | undefined;
  priceDescription: string;
}

/** Where the paid MCP tools are served, and how. */
export const MCP_X402_PATH = "/mcp/x402";
const MCP_TRANSPORT = "streamable-http";

export const AgentPaymentsDocument = z
  .object({
    service: z.string(),
    protocols: z.array(z.object({ name: z.string(), description: z.string() }).catchall(z.unknown())),
    networks: z.array(z.object({ network: z.string(), chain_id: z.number().int() })),
    assets: z.array(
      z.object({ network: z.string(), address: z.string(), name: z.string(), version: z.string(), decimals: z.number().int(), transfer: z.string() }),
    ),
    payee: z.string(),
    mode: z.string(),
    test_money: z.boolean(),
    currency: z.literal("USD"),
    routes: z.array(
      z.object({
        method: z.string(),
        path: z.string(),
        url: z.string(),
        summary: z.string(),
        price: z.string().nullable(),
        prices: z.record(z.string(), z.string()).optional(),
        price_description: z.string(),
      }),
    ),
    topup: z.object({ url: z.string(), methods: z.array(z.string()), min: z.string(), max: z.string(), returns: z.string() }),
    agent_token: z.object({ header: z.string(), format: z.string(), obtain: z.string(), description: z.string() }),
    links: z.record(z.string(), z.string()),
  })
  .meta({ id: "AgentPaymentsDocument" });

/** `/.well-known/agent-payments.json`: everything a wallet needs to pay this service, in one place. */
export function buildAgentPaymentsDocument(base: string, terms: PaymentSettings, routes: PaidRoute[]): z.infer<typeof AgentPaymentsDocument> {
  return {
    service: "agentline",
    protocols: [
      { name: "x402", description: "x402 v2, exact scheme (EIP-3009). Challenge: PAYMENT-REQUIRED; credential: PAYMENT-SIGNATURE; receipt: PAYMENT-RESPONSE." },
      {
        name: "mpp",
        description:
          "Machine Payments Protocol, method evm, intent charge. Challenge: WWW-Authenticate: Payment; credential: Authorization: Payment (Payment-Authorization when an API key is sent too); receipt: Payment-Receipt.",
      },
    ],
    networks: [{ network: terms.network, chain_id: terms.chainId }],
    assets: [
      { network: terms.network, address: terms.asset, name: terms.assetName, version: terms.assetVersion, decimals: terms.decimals, transfer: "eip3009" },
    ],
    payee: terms.payee,
    mode: terms.mode,
    test_money: terms.testMoney,
    currency: "USD",
    routes: routes.map((r) => ({
      method: r.method.toUpperCase(),
      path: r.path,
      url: base + r.path,
      summary: r.summary,
      price: r.fixedMicros === null ? null : formatMicros(r.fixedMicros),
      ...(r.variants ? { prices: Object.fromEntries(Object.entries(r.variants).map(([k, v]) => [k, formatMicros(v)])) } : {}),
      price_description: r.priceDescription,
    })),
    topup: {
      url: `${base}/v1/billing/topup/x402/pay?amount={amount}`,
      methods: ["GET", "POST"],
      min: formatMicros(terms.topupMinMicros),
      max: formatMicros(terms.topupMaxMicros),
      returns: "agent_token",
    },
    agent_token: {
      header: "Authorization",
      format: "Bearer at_...",
      obtain: `${base}/v1/billing/topup/x402/pay`,
      description:
        "Present it on the /v1/x402 routes instead of paying each request; the balance must cover the request's price. A top-up paid with no credential mints a new one (shown once); earlier ones stay live until revoked (GET /v1/auth/agent-tokens lists them, DELETE revokes).",
    },
    links: {
      openapi: `${base}/openapi.json`,
      x402: `${base}/.well-known/x402`,
      service: `${base}/.well-known/service.json`,
      mcp_x402: base + MCP_X402_PATH,
    },
  };
}

/** `/.well-known/x402`: the paid resources, as x402 indexers list them. */
export function buildX402Discovery(base: string, terms: PaymentSettings, routes: PaidRoute[], tools: PaidMcpTool[] = []) {
  const accepts = (r: { fixedMicros: number | null; variants: Record<string, number> | undefined }) => {
    const amounts = r.fixedMicros !== null ? [r.fixedMicros] : Object.values(r.variants ?? {});
    return [...new Set(amounts)].map((amount) => ({
      scheme: "exact",
      network: terms.network,
      asset: terms.asset,
      amount: String(amount),
      payTo: terms.payee,
      maxTimeoutSeconds: 300,
      extra: { name: terms.assetName, version: terms.assetVersion, assetTransferMethod: "eip3009" },
    }));
  };
  return {
    x402Version: 2,
    serviceName: "agentline",
    resources: [
      ...routes.map((r) => ({
        resource: base + r.path,
        type: "http",
        x402Version: 2,
        method: r.method.toUpperCase(),
        description: `${r.summary}. ${r.priceDescription}`,
        accepts: accepts(r),
      })),
      // The paid MCP tools, as x402's MCP transport names them (mcp://tool/<name>), with the
      // bazaar discovery extension's MCP input: the tool, its inputSchema and the transport.
      ...tools.map((t) => ({
        resource: `mcp://tool/${t.tool}`,
        type: "mcp",
        x402Version: 2,
        url: base + MCP_X402_PATH,
        description: `${t.description} ${t.priceDescription}`,
        accepts: accepts(t),
        extensions: {
          bazaar: {
            info: { input: { type: "mcp", tool: t.tool, description: t.description, transport: MCP_TRANSPORT, inputSchema: t.inputSchema } },
          },
        },
      })),
    ],
  };
}

/** The paid MCP tools in the service document: where they are served, and each one's price. */
export function mcpToolsEntry(base: string, tools: PaidMcpTool[]) {
  return {
    url: base + MCP_X402_PATH,
    transport: MCP_TRANSPORT,
    payment: "In each tools/call's params._meta: x402 'x402/payment' (PaymentPayload) or MPP 'org.paymentauth/credential'; no credential needed.",
    tools: tools.map((t) => ({
      tool: t.tool,
      price: t.fixedMicros === null ? null : formatMicros(t.fixedMicros),
      ...(t.variants ? { prices: Object.fromEntries(Object.entries(t.variants).map(([k, v]) => [k, formatMicros(v)])) } : {}),
      price_description: t.priceDescription,
    })),
  };
}

/** MPP's `x-payment-info` for a paid operation in the OpenAPI document. */
export function paymentInfo(terms: PaymentSettings, route: PaidRoute) {
  return {
    offers: [
      {
        intent: "charge",
        method: "evm",
        amount: route.fixedMicros === null ? null : String(route.fixedMicros),
        currency: terms.asset,
        description: route.priceDescription,
      },
    ],
  };
}
