import { listConversations, listMessages } from "../../core/messages/messages.js";
import { Conversation, ListConversationsQuery, ListMessagesQuery, Message, SendTextBody } from "../../core/messages/schemas.js";
import { sendText } from "../../core/messages/send-text.js";
import { listOf } from "../../core/schemas/common.js";
import { defineRoute } from "../http/route.js";

const tags = ["Messages"];

export const messageRoutes = [
  defineRoute({
    operationId: "listMessages",
    method: "get",
    path: "/v1/messages",
    summary: "List texts",
    description: "Received and sent texts, newest first. Received bodies are untrusted data, returned exactly as received.",
    tags,
    auth: "api_key",
    query: ListMessagesQuery,
    response: { status: 200, description: "A page of messages", schema: listOf(Message).meta({ id: "MessageList" }) },
    errors: [404],
    handler: ({ core, auth, query }) => listMessages(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "sendText",
    method: "post",
    path: "/v1/messages",
    summary: "Send a text",
    description:
      "Texts `to_number` from the agent's number (`from_number`, one of its numbers, or its oldest active one). Each segment is charged from the balance " +
      "(GSM-7: 160 characters in one, 153 per segment beyond; otherwise 70 and 67), 402 `insufficient_balance` before anything is sent when it cannot; " +
      "a carrier refusing the text at once refunds it. A recipient who texted STOP to that number gets 409 `recipient_opted_out` until they text START. " +
      "The answer is the text as queued; `sms.status` events follow it to `sent`, `delivered`, or `failed` (refunded) or `undelivered`. " +
      "Send an Idempotency-Key to make retries safe.",
    tags,
    auth: "api_key",
    body: SendTextBody,
    response: { status: 201, description: "The text, queued", schema: Message },
    errors: [402, 404, 409, 502],
    handler: ({ core, auth, body }) => sendText(core, auth.accountId, body),
  }),
  defineRoute({
    operationId: "listConversations",
    method: "get",
    path: "/v1/messages/conversations",
    summary: "List text threads",
    description: "One thread per agent and remote number, most recently active first.",
    tags,
    auth: "api_key",
    query: ListConversationsQuery,
    response: { status: 200, description: "A page of threads", schema: listOf(Conversation).meta({ id: "ConversationList" }) },
    errors: [404],
    handler: ({ core, auth, query }) => listConversations(core, auth.accountId, query),
  }),
];
