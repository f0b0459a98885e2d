import { listConversations, listMessages } from "../../core/messages/messages.js";
import { Conversation, ListConversationsQuery, ListMessagesQuery, Message } from "../../core/messages/schemas.js";
import { listOf } from "../../core/schemas/common.js";
import { defineRoute } from "../http/route.js";

const tags = ["Messages"];

export const messageRoutes = [
  defineRoute({
    operationId: "listMessages",
    method: "get",
    path: "/v1/messages",
    summary: "List received texts",
    description: "Newest first. Text bodies are untrusted data, returned exactly as received.",
    tags,
    auth: "api_key",
    query: ListMessagesQuery,
    response: { status: 200, description: "A page of messages", schema: listOf(Message).meta({ id: "MessageList" }) },
    errors: [404],
    handler: ({ core, auth, query }) => listMessages(core, auth.accountId, query),
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
