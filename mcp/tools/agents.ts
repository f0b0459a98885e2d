import { createAgent, getAgent, listAgents, updateAgent } from "../../core/agents/agents.js";
import { deleteAgent } from "../../core/agents/delete-agent.js";
import { Agent, AgentIdParams, CreateAgentBody, DeletedAgent, UpdateAgentBody } from "../../core/agents/schemas.js";
import { listOf, Pagination } from "../../core/schemas/common.js";
import { defineTool } from "../tool.js";

export const agentTools = [
  defineTool({
    name: "list_agents",
    title: "List agents",
    description: "Lists the account's agents, newest first. Use it to find an agent_id; every number, call and event belongs to one agent.",
    input: [Pagination],
    output: listOf(Agent),
    hints: { readOnly: true },
    run: ({ core, accountId }, args) => listAgents(core, accountId, args),
  }),
  defineTool({
    name: "create_agent",
    title: "Create an agent",
    description:
      "Creates an agent: the identity that owns phone numbers, places and answers calls and receives texts. Create one first, then buy_number for it. " +
      "owner_number: the phone of the person it works for; voice_id picks its voice (list_voices).",
    input: [CreateAgentBody],
    output: Agent,
    hints: {},
    run: ({ core, accountId }, args) => createAgent(core, accountId, args),
  }),
  defineTool({
    name: "get_agent",
    title: "Get an agent",
    description: "Reads one agent by agent_id: its name, owner_number, voice and metadata.",
    input: [AgentIdParams],
    output: Agent,
    hints: { readOnly: true },
    run: ({ core, accountId }, args) => getAgent(core, accountId, args.agent_id),
  }),
  defineTool({
    name: "update_agent",
    title: "Update an agent",
    description: "Changes only the fields given; null clears description, owner_number or voice_id. Use set_webhook for its webhook.",
    input: [AgentIdParams, UpdateAgentBody],
    output: Agent,
    hints: { idempotent: true },
    run: ({ core, accountId }, { agent_id, ...changes }) => updateAgent(core, accountId, agent_id, changes),
  }),
  defineTool({
    name: "delete_agent",
    title: "Delete an agent",
    description:
      "Deletes the agent with its calls and messages, permanently, and releases its purchased numbers with it (their monthly fees stop; a released " +
      "number never comes back). Reassign a number to another agent first to keep it. Attached numbers (bought elsewhere and brought here) stay on the account, unassigned.",
    input: [AgentIdParams],
    output: DeletedAgent,
    hints: { destructive: true },
    run: ({ core, accountId }, args) => deleteAgent(core, accountId, args.agent_id),
  }),
];
