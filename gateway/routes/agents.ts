import { createAgent, getAgent, listAgents, updateAgent } from "../../core/agents/agents.js";
import { deleteAgent } from "../../core/agents/delete-agent.js";
import { Agent, AgentIdParams, CreateAgentBody, DeletedAgent, UpdateAgentBody } from "../../core/agents/schemas.js";
import { listOf, Pagination } from "../../core/schemas/common.js";
import { defineRoute } from "../http/route.js";

const tags = ["Agents"];

export const agentRoutes = [
  defineRoute({
    operationId: "listAgents",
    method: "get",
    path: "/v1/agents",
    summary: "List agents",
    description: "Newest first.",
    tags,
    auth: "api_key",
    query: Pagination,
    response: { status: 200, description: "A page of agents", schema: listOf(Agent).meta({ id: "AgentList" }) },
    handler: ({ core, auth, query }) => listAgents(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "createAgent",
    method: "post",
    path: "/v1/agents",
    summary: "Create an agent",
    tags,
    auth: "api_key",
    body: CreateAgentBody,
    response: { status: 201, description: "The new agent", schema: Agent },
    handler: ({ core, auth, body }) => createAgent(core, auth.accountId, body),
  }),
  defineRoute({
    operationId: "getAgent",
    method: "get",
    path: "/v1/agents/{agent_id}",
    summary: "Get an agent",
    tags,
    auth: "api_key",
    params: AgentIdParams,
    response: { status: 200, description: "The agent", schema: Agent },
    handler: ({ core, auth, params }) => getAgent(core, auth.accountId, params.agent_id),
  }),
  defineRoute({
    operationId: "updateAgent",
    method: "patch",
    path: "/v1/agents/{agent_id}",
    summary: "Update an agent",
    description: "Changes only the fields sent; `null` clears `description`, `owner_number` or `voice_id`. Webhooks are set through /v1/webhooks.",
    tags,
    auth: "api_key",
    params: AgentIdParams,
    body: UpdateAgentBody,
    response: { status: 200, description: "The updated agent", schema: Agent },
    handler: ({ core, auth, params, body }) => updateAgent(core, auth.accountId, params.agent_id, body),
  }),
  defineRoute({
    operationId: "deleteAgent",
    method: "delete",
    path: "/v1/agents/{agent_id}",
    summary: "Delete an agent",
    description:
      "Deletes the agent with its calls and messages, and releases its purchased numbers (permanently: their monthly fees stop); its attached numbers " +
      "stay on the account, unassigned. The answer lists both. To keep a number, reassign it to another agent first.",
    tags,
    auth: "api_key",
    params: AgentIdParams,
    response: { status: 200, description: "The agent is deleted", schema: DeletedAgent },
    handler: ({ core, auth, params }) => deleteAgent(core, auth.accountId, params.agent_id),
  }),
];
