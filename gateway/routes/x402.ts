import { presentAgent, updateAgent } from "../../core/agents/agents.js";
import { Agent } from "../../core/agents/schemas.js";
import { hangupCall } from "../../core/calls/hangup-call.js";
import { getTranscript } from "../../core/calls/read-calls.js";
import { sayOnCall } from "../../core/calls/say-on-call.js";
import { Call, CallIdParams, DigitsBody, DigitsResult, SayBody, SayResult, Transcript, TransferBody } from "../../core/calls/schemas.js";
import { sendDigits } from "../../core/calls/send-digits.js";
import { transferByAccount } from "../../core/calls/transfer.js";
import { AppError } from "../../core/errors.js";
import { pollEvents } from "../../core/events/events.js";
import { EventBatch, PollEventsQuery } from "../../core/events/schemas.js";
import { Message } from "../../core/messages/schemas.js";
import { listNumbers } from "../../core/numbers/numbers.js";
import { PhoneNumberRecord } from "../../core/numbers/schemas.js";
import { listOf, Pagination } from "../../core/schemas/common.js";
import { WalletAgentUpdate, WalletBuyBody, WalletCallBody, WalletPurchase, WalletRenewBody, WalletTextBody } from "../../core/wallet/schemas.js";
import { buyWalletNumber, placeWalletCall, renewWalletNumber, sendWalletText, walletAgent } from "../../core/wallet/wallet.js";
import { SetWalletWebhookBody, SetWebhookResult, Webhook, WebhookTestResult } from "../../core/webhooks/schemas.js";
import { getWebhook, setWebhook, testWebhook } from "../../core/webhooks/webhooks.js";
import { callPrice, numberPrice, renewPrice, requestPrice, textPrice } from "../../payments/prices.js";
import { defineRoute, Reply } from "../http/route.js";

const tags = ["No signup (x402, MPP)"];
const auth = "agent_token_or_payment" as const;
const paid = "Pay per request with x402 or MPP, or send an agent_token whose balance covers the price.";

/**
 * The no-signup route family: a wallet's own account, reached with its agent_token or a payment
 * for each request. The wallet has one agent, created with its first number.
 */
export const x402Routes = [
  defineRoute({
    operationId: "walletBuyNumber",
    method: "post",
    path: "/v1/x402/numbers/buy",
    summary: "Buy a number (and create the wallet's agent)",
    description: `A 30-day lease, renewed with /v1/x402/numbers/renew; an unrenewed number is released when its lease ends (event number.released). ${paid}`,
    tags,
    auth,
    price: numberPrice,
    body: WalletBuyBody,
    response: { status: 201, description: "The number and the agent", schema: WalletPurchase },
    errors: [409, 502],
    handler: ({ core, auth, body }) => buyWalletNumber(core, auth.accountId, body),
  }),
  defineRoute({
    operationId: "walletListNumbers",
    method: "get",
    path: "/v1/x402/numbers",
    summary: "List the wallet's numbers",
    description: `Active numbers with their lease's \`expires_at\`. ${paid}`,
    tags,
    auth,
    price: requestPrice,
    query: Pagination,
    response: { status: 200, description: "A page of numbers", schema: listOf(PhoneNumberRecord) },
    handler: ({ core, auth, query }) => listNumbers(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "walletRenewNumber",
    method: "post",
    path: "/v1/x402/numbers/renew",
    summary: "Extend a number's lease by 30 days",
    description: `Charges the number's monthly fee. ${paid}`,
    tags,
    auth,
    price: renewPrice,
    body: WalletRenewBody,
    response: { status: 200, description: "The number, with its new expires_at", schema: PhoneNumberRecord },
    errors: [404, 409],
    handler: ({ core, auth, body }) => renewWalletNumber(core, auth.accountId, body.number_id),
  }),
  defineRoute({
    operationId: "walletGetAgent",
    method: "get",
    path: "/v1/x402/agents",
    summary: "Get the wallet's agent",
    tags,
    auth,
    price: requestPrice,
    response: { status: 200, description: "The agent", schema: Agent },
    errors: [404],
    handler: async ({ core, auth }) => presentAgent(await walletAgent(core, auth.accountId)),
  }),
  defineRoute({
    operationId: "walletUpdateAgent",
    method: "patch",
    path: "/v1/x402/agents",
    summary: "Update the wallet's agent",
    description: `Changes only the fields sent. ${paid}`,
    tags,
    auth,
    price: requestPrice,
    body: WalletAgentUpdate,
    response: { status: 200, description: "The agent", schema: Agent },
    errors: [404],
    handler: async ({ core, auth, body }) => updateAgent(core, auth.accountId, (await walletAgent(core, auth.accountId)).agentId, body),
  }),
  defineRoute({
    operationId: "walletPlaceCall",
    method: "post",
    path: "/v1/x402/calls",
    summary: "Place a call from the wallet's agent",
    description: `Talk time is charged per second from the balance; the call ends when it runs out. ${paid}`,
    tags,
    auth,
    price: callPrice,
    body: WalletCallBody,
    response: { status: 201, description: "The call", schema: Call },
    errors: [400, 404, 409, 502],
    handler: ({ core, auth, body }) => placeWalletCall(core, auth.accountId, body.to_number, body),
  }),
  defineRoute({
    operationId: "walletHangupCall",
    method: "post",
    path: "/v1/x402/calls/{call_id}/hangup",
    summary: "Hang up one of the wallet's calls",
    description: `A connected call becomes \`completed\`, a ringing one \`canceled\`; an ended call is returned unchanged. Spends nothing, like the reads: a payment for it stays on the balance. ${paid}`,
    tags,
    auth,
    price: requestPrice,
    params: CallIdParams,
    response: { status: 200, description: "The call after hanging up", schema: Call },
    handler: ({ core, auth, params }) => hangupCall(core, auth.accountId, params.call_id),
  }),
  defineRoute({
    operationId: "walletSayOnCall",
    method: "post",
    path: "/v1/x402/calls/{call_id}/say",
    summary: "Say something unprompted on one of the wallet's calls",
    description: `As \`POST /v1/calls/{call_id}/say\`: 409 \`turn_open\` while a caller turn waits for its answer, 410 \`call_ended\`. Spends nothing, like the reads. ${paid}`,
    tags,
    auth,
    price: requestPrice,
    params: CallIdParams,
    body: SayBody,
    response: { status: 200, description: "Spoken", schema: SayResult },
    errors: [404, 409, 410],
    handler: ({ core, auth, params, body }) => sayOnCall(core, auth.accountId, params.call_id, body),
  }),
  defineRoute({
    operationId: "walletSendDigits",
    method: "post",
    path: "/v1/x402/calls/{call_id}/digits",
    summary: "Press keys on one of the wallet's calls",
    description: `As \`POST /v1/calls/{call_id}/digits\`: \`0-9\`, \`*\`, \`#\`, \`w\` a half-second pause, at most 32. Spends nothing, like the reads. ${paid}`,
    tags,
    auth,
    price: requestPrice,
    params: CallIdParams,
    body: DigitsBody,
    response: { status: 200, description: "Sent", schema: DigitsResult },
    errors: [404, 409, 410],
    handler: ({ core, auth, params, body }) => sendDigits(core, auth.accountId, params.call_id, body.digits),
  }),
  defineRoute({
    operationId: "walletTransferCall",
    method: "post",
    path: "/v1/x402/calls/{call_id}/transfer",
    summary: "Transfer one of the wallet's calls to a person",
    description: `As POST /v1/calls/{call_id}/transfer: cold or warm; the bridged leg is charged per second at the outbound rate from the balance. ${paid}`,
    tags,
    auth,
    price: callPrice,
    params: CallIdParams,
    body: TransferBody,
    response: { status: 200, description: "The call, with its transfer", schema: Call },
    errors: [402, 404, 409, 410],
    handler: ({ core, auth, params, body }) => transferByAccount(core, auth.accountId, params.call_id, body),
  }),
  defineRoute({
    operationId: "walletGetTranscript",
    method: "get",
    path: "/v1/x402/calls/{call_id}/transcript",
    summary: "Read a call's transcript",
    tags,
    auth,
    price: requestPrice,
    params: CallIdParams,
    response: { status: 200, description: "The transcript", schema: Transcript },
    handler: ({ core, auth, params }) => getTranscript(core, auth.accountId, params.call_id),
  }),
  defineRoute({
    operationId: "walletGetWebhook",
    method: "get",
    path: "/v1/x402/webhooks",
    summary: "Get the wallet agent's webhook",
    description: `The secret is masked. ${paid}`,
    tags,
    auth,
    price: requestPrice,
    response: { status: 200, description: "The webhook", schema: Webhook },
    errors: [404],
    handler: async ({ core, auth }) => {
      const agent = await walletAgent(core, auth.accountId);
      const webhook = await getWebhook(core, auth.accountId, agent.agentId);
      if (!webhook) throw new AppError("not_found", "The wallet's agent has no webhook. Set one with POST /v1/x402/webhooks.");
      return webhook;
    },
  }),
  defineRoute({
    operationId: "walletSetWebhook",
    method: "post",
    path: "/v1/x402/webhooks",
    summary: "Set the wallet agent's webhook",
    description: `Creates (201) or replaces (200) it, keeping its secret unless \`secret\` or \`rotate_secret: true\` is sent; the response shows a new secret once. ${paid}`,
    tags,
    auth,
    price: requestPrice,
    idempotencyRefused: "its answer can carry a secret shown once, which the service does not keep in the clear",
    body: SetWalletWebhookBody,
    response: { status: 201, description: "Created", schema: SetWebhookResult },
    otherResponses: [{ status: 200, description: "Replaced", schema: SetWebhookResult }],
    errors: [404],
    handler: async ({ core, auth, body }) => {
      const agent = await walletAgent(core, auth.accountId);
      const { webhook, created } = await setWebhook(core, auth.accountId, { ...body, agent_id: agent.agentId });
      return new Reply(created ? 201 : 200, webhook);
    },
  }),
  defineRoute({
    operationId: "walletTestWebhook",
    method: "post",
    path: "/v1/x402/webhooks/test",
    summary: "Send a signed webhook.test to the wallet agent's webhook",
    tags,
    auth,
    price: requestPrice,
    response: { status: 200, description: "The first attempt", schema: WebhookTestResult },
    errors: [404],
    handler: async ({ core, auth }) => testWebhook(core, auth.accountId, (await walletAgent(core, auth.accountId)).agentId),
  }),
  defineRoute({
    operationId: "walletPollEvents",
    consumes: true,
    method: "get",
    path: "/v1/x402/events",
    summary: "Poll the wallet agent's events",
    description: `Returns pending events, oldest first, and consumes them. ${paid}`,
    tags,
    auth,
    price: requestPrice,
    query: PollEventsQuery.omit({ agent_id: true }),
    response: { status: 200, description: "The events, now consumed", schema: EventBatch },
    errors: [404],
    handler: async ({ core, auth, query }) => pollEvents(core, auth.accountId, { agent_id: (await walletAgent(core, auth.accountId)).agentId, ...query }),
  }),
  defineRoute({
    operationId: "walletSendText",
    method: "post",
    path: "/v1/x402/messages",
    summary: "Send a text from the wallet's agent",
    description: `From the agent's number (or \`from_number\`, one of its numbers). Each segment is charged from the balance; a recipient who texted STOP gets 409 \`recipient_opted_out\`. ${paid}`,
    tags,
    auth,
    price: textPrice,
    body: WalletTextBody,
    response: { status: 201, description: "The text, queued", schema: Message },
    errors: [404, 409, 502],
    handler: ({ core, auth, body }) => sendWalletText(core, auth.accountId, body),
  }),
];
