import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { calls } from "../../core/db/schema/calls.js";
import { numbers } from "../../core/db/schema/numbers.js";
import { x402Routes } from "../../gateway/routes/x402.js";
import { PAID_TOOL_NAMES } from "../../mcp/paid/catalogue.js";
import { startTestService, type TestService } from "../support/service.js";
import { newWallet } from "../support/wallet.js";
import { call, holdings, mcpClient, mppWrap, ok, paymentRequired, payX402, x402Payer } from "./support.js";

// /mcp/x402 with local test money (PAYMENTS_MODE=local): a wallet with no account pays for MCP
// tools with @x402/core's client and with mppx's MCP client, through the MCP SDK's Client.
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
});
afterAll(() => service?.stop());

describe("tools/list on /mcp/x402", () => {
  it("offers a tool for every /v1/x402 route and the top-up, each stating its price, with the route's schemas", async () => {
    const client = await mcpClient(service.baseUrl);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names.sort()).toEqual([...x402Routes.map((r) => PAID_TOOL_NAMES[r.operationId]), "top_up"].sort());
    const byName = new Map(tools.map((t) => [t.name, t]));
    // /mcp's live call view is not offered here: its polls would each be paid, and there is no resource to read.
    for (const tool of tools) expect(Object.keys(tool._meta ?? {}), tool.name).not.toContain("ui");
    expect(byName.get("get_transcript")!.description).toContain("Price: 0.001000 USD");
    expect(byName.get("buy_number")!.description).toMatch(/Price: The number's monthly fee .*local 1\.150000, toll_free 2\.150000, mobile 1\.500000 USD/);
    expect(byName.get("place_call")!.description).toMatch(/Price: \d+\.\d{6} USD \(5 minutes of outbound talk/);
    expect(byName.get("top_up")!.inputSchema.required).toEqual(["amount"]);
    // In MCP's terms: no HTTP paths, statuses or sentences on paying a request.
    for (const tool of tools) expect(tool.description, tool.name).not.toMatch(/\/v1\/|\b(?:20[01]|4\d\d)\b|Pay per request|API key|query `/);
    // The output is the route's answer (with the agent_token), or x402's PaymentRequired for an unpaid call.
    const [answer, unpaid] = byName.get("buy_number")!.outputSchema!.anyOf as Array<{ properties: object; required: string[] }>;
    expect(Object.keys(answer!.properties)).toEqual(["number", "agent", "balance", "currency", "agent_token"]);
    expect(unpaid!.required).toEqual(["x402Version", "accepts", "resource"]);
    await client.close();
  });
});

describe("an unpaid call", () => {
  it("is an error result carrying x402's PaymentRequired and MPP's challenges, and does nothing", async () => {
    const client = await mcpClient(service.baseUrl);
    const result = await call(client, "buy_number", { number_type: "toll_free" });
    const required = paymentRequired(result);
    expect(required.resource.url).toBe("mcp://tool/buy_number");
    expect(required.accepts[0]).toMatchObject({ amount: "2150000", network: "eip155:84532" });
    const before = await service.core.db.select().from(numbers);
    expect(before).toEqual([]);
    await client.close();
  });

  it("with bad arguments is refused before any price or payment is asked", async () => {
    const client = await mcpClient(service.baseUrl);
    const result = await call(client, "place_call", { to_number: "nope" });
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/^validation_error .*\n- to_number: must be an E\.164/s);
    expect(result._meta).toBeUndefined();
    await client.close();
  });
});

describe("a wallet's journey over MCP only", () => {
  it("x402: buys a number, places a sandbox call, reads its transcript; its agent_token then serves /mcp/x402 and /mcp", async () => {
    const wallet = newWallet();
    const client = await mcpClient(service.baseUrl);
    const bought = await payX402(client, wallet, "buy_number", { number_type: "local", agent_name: "Wallet bot" });
    const purchase = ok(bought.result);
    expect(purchase.number.phone_number).toMatch(/^\+1/);
    expect(purchase.agent.name).toBe("Wallet bot");
    expect(purchase.agent_token).toMatch(/^at_/);
    expect(bought.result._meta?.["agentline/agent_token"]).toBe(purchase.agent_token);
    expect(bought.result._meta?.["x402/payment-response"]).toMatchObject({ success: true, payer: wallet.address, network: "eip155:84532" });
    // The payment (1.15) was credited, then the number's month (1.15) spent from it.
    expect(await holdings(service.core, wallet)).toMatchObject({ balance: 0, ledger: 2, settlements: 1 });

    const placed = await payX402(client, wallet, "place_call", { to_number: "+14155550123", greeting: "Hello there" });
    const callRow = ok(placed.result);
    expect(callRow.status).toMatch(/queued|ringing|in-progress/);
    // The wallet holds its token already: a later paid result does not mint another.
    expect(callRow.agent_token).toBeUndefined();
    const token = purchase.agent_token as string;

    // With the token, the far party speaks through /mcp (the same account), and /mcp/x402 reads what the balance covers without paying.
    const mcp = await mcpClient(service.baseUrl, token, "/mcp");
    await expect.poll(async () => ok(await call(mcp, "get_call", { call_id: callRow.call_id })).status, { timeout: 10_000 }).toBe("in-progress");
    ok(await call(mcp, "simulate_caller_speech", { call_id: callRow.call_id, text: "Hello from the far side" }));
    const paidClient = await mcpClient(service.baseUrl, token);
    const before = await holdings(service.core, wallet);
    const transcript = ok(await call(paidClient, "get_transcript", { call_id: callRow.call_id }));
    expect(transcript.call_id).toBe(callRow.call_id);
    expect(transcript.transcript).toContainEqual(expect.objectContaining({ role: "user", text: "Hello from the far side" }));
    expect((await holdings(service.core, wallet)).settlements).toBe(before.settlements);
    const numbersOnMcp = ok(await call(mcp, "list_numbers"));
    expect(numbersOnMcp.data.map((n: { number_id: string }) => n.number_id)).toEqual([purchase.number.number_id]);
    const hungUp = ok(await call(paidClient, "hang_up_call", { call_id: callRow.call_id }));
    expect(hungUp.status).toMatch(/completed|canceled/);
    for (const c of [client, mcp, paidClient]) await c.close();
  });

  it("MPP (mppx's McpClient.wrap): buys a number and places a call, with receipts; a base64 x402 payment is taken too", async () => {
    const wallet = newWallet();
    const client = mppWrap(await mcpClient(service.baseUrl), wallet);
    const bought = await call(client, "buy_number", { number_type: "local" });
    const purchase = ok(bought);
    expect(purchase.agent_token).toMatch(/^at_/);
    expect(bought._meta?.["org.paymentauth/receipt"]).toMatchObject({ method: "evm", status: "success", challengeId: expect.any(String) });
    expect(bought.receipt).toEqual(bought._meta?.["org.paymentauth/receipt"]);
    const placed = ok(await call(client, "place_call", { to_number: "+14155550124" }));
    expect(placed.call_id).toMatch(/^call_/);
    const [row] = await service.core.db.select().from(calls).where(eq(calls.callId, placed.call_id));
    expect(row!.accountId).toBe((await holdings(service.core, wallet)).accountId);
    await client.close();

    // x402's payment as base64, as the PAYMENT-SIGNATURE header carries it.
    const other = newWallet();
    const plain = await mcpClient(service.baseUrl);
    const required = paymentRequired(await call(plain, "top_up", { amount: "2.5" }));
    const payment = Buffer.from(JSON.stringify(await x402Payer(other)(required))).toString("base64");
    const topped = ok(await call(plain, "top_up", { amount: "2.5" }, { "x402/payment": payment }));
    expect(topped).toMatchObject({
      credited: "2.500000",
      balance: "2.500000",
      payer: other.address,
      test_money: true,
      agent_token: expect.stringMatching(/^at_/),
    });
    await plain.close();
  });
});

describe("a paid call refused after paying", () => {
  it("keeps the payment on the balance, says so, and hands the wallet its first agent_token", async () => {
    const wallet = newWallet();
    const client = await mcpClient(service.baseUrl);
    // No agent yet: it comes with the wallet's first number.
    const { result } = await payX402(client, wallet, "get_agent");
    expect(result.isError).toBe(true);
    const text = (result.content[0] as { text: string }).text;
    expect(text).toMatch(/^not_found .*credited to this wallet's balance/s);
    const token = result._meta?.["agentline/agent_token"] as string;
    expect(token).toMatch(/^at_/);
    expect(text).toContain(token);
    expect(result._meta?.["x402/payment-response"]).toMatchObject({ success: true });
    expect(await holdings(service.core, wallet)).toMatchObject({ balance: 1_000, ledger: 1, settlements: 1 });
    // The token works: with it, a number is bought once the balance covers it (here, paid again).
    const withToken = await mcpClient(service.baseUrl, token);
    ok((await payX402(withToken, wallet, "buy_number", { number_type: "local" })).result);
    await Promise.all([client.close(), withToken.close()]);
  });
});

describe("the endpoint's rules", () => {
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  });
  const post = (headers: Record<string, string>) =>
    fetch(`${service.baseUrl}/mcp/x402`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      body: initialize,
    });

  it("takes the /mcp transport's header and Origin rules", async () => {
    expect((await post({ accept: "application/json" })).status).toBe(406);
    expect((await post({ origin: "https://evil.example" })).status).toBe(403);
    expect((await post({})).status).toBe(200);
  });

  it("refuses an API key or an unknown agent_token, naming what it takes", async () => {
    const key = await post({ authorization: "Bearer sk_live_abc" });
    expect(key.status).toBe(401);
    expect(((await key.json()) as { detail: string }).detail).toMatch(/API keys and OAuth sign-ins use \/mcp/);
    const unknown = await post({ authorization: "Bearer at_nope" });
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as { detail: string }).detail).toMatch(/invalid or has been revoked/);
  });

  it("with an agent_token whose balance falls short: challenged, and another wallet's payment is credited to the token's account", async () => {
    const owner = newWallet();
    const first = await mcpClient(service.baseUrl);
    const token = ok((await payX402(first, owner, "buy_number", { number_type: "local" })).result).agent_token as string;
    await first.close();
    const withToken = await mcpClient(service.baseUrl, token);
    const unpaid = await call(withToken, "place_call", { to_number: "+14155550125" });
    paymentRequired(unpaid);
    const friend = newWallet();
    const placed = await payX402(withToken, friend, "place_call", { to_number: "+14155550125" });
    const callRow = ok(placed.result);
    expect(callRow.agent_token).toBeUndefined();
    const { accountId } = await holdings(service.core, owner);
    const [row] = await service.core.db.select().from(calls).where(eq(calls.callId, callRow.call_id));
    expect(row!.accountId).toBe(accountId);
    // The friend's payment went to the owner's account: the friend has none.
    expect((await holdings(service.core, friend)).accountId).toBeNull();
    await withToken.close();
  });
});
