import { getAgent } from "../core/agents/agents.js";
import { loadCall } from "../core/calls/call-records.js";
import { AppError, notFound } from "../core/errors.js";
import { agentAnswering, loadNumber } from "../core/numbers/numbers.js";
import type { Tool, ToolContext } from "./tool.js";

/**
 * How a tool stays inside a connection limited to one agent (an OAuth grant the account holder
 * limited). Every other agent's things answer exactly as another account's do: 404.
 * - `confined`: an `agent_id` argument must be the agent's (a list's filter is set to it when
 *   absent); a `call_id` or `number_id` must be one of its calls or numbers;
 * - `inbound`: confined, and `to_number` must be a number the agent answers;
 * - `only_agent`: list_agents, which lists the agent alone;
 * - `open`: touches no agent's things (the voice catalogue, the balance, feedback);
 * - `account`: acts on the whole account (a new agent, the default voice, the ledger): refused.
 * A tool missing here is refused: a new tool must be placed (test/oauth/agent-limit.test.ts checks).
 */
type Rule = "confined" | "inbound" | "only_agent" | "open" | "account";

export const AGENT_LIMIT_RULES: Record<string, Rule> = {
  list_agents: "only_agent",
  create_agent: "account",
  get_agent: "confined",
  update_agent: "confined",
  delete_agent: "confined",
  list_numbers: "confined",
  buy_number: "confined",
  get_number: "confined",
  reassign_number: "confined",
  release_number: "confined",
  place_call: "confined",
  list_calls: "confined",
  get_call: "confined",
  get_transcript: "confined",
  hang_up_call: "confined",
  push_context: "confined",
  say_on_call: "confined",
  send_digits: "confined",
  transfer_call: "confined",
  wait_for_event: "confined",
  peek_events: "confined",
  list_messages: "confined",
  list_conversations: "confined",
  get_webhook: "confined",
  set_webhook: "confined",
  delete_webhook: "confined",
  test_webhook: "confined",
  list_voices: "open",
  get_default_voice: "open",
  set_default_voice: "account",
  reset_default_voice: "account",
  get_balance: "open",
  get_usage: "account",
  list_transactions: "account",
  send_feedback: "open",
  list_feedback: "open",
  simulate_inbound_call: "inbound",
  simulate_caller_speech: "confined",
  simulate_caller_hangup: "confined",
  simulate_inbound_text: "inbound",
  send_text: "confined",
  watch_call: "confined",
};

/**
 * The tool's run for a connection limited to `agentId`, with its arguments checked (and a list's
 * agent filter set); throws the 404 (or, for what acts on the whole account, the 403) instead.
 */
export async function confineToAgent(tool: Tool, context: ToolContext & { agentId: string }, args: Record<string, unknown>): Promise<() => Promise<unknown>> {
  const { core, accountId, agentId } = context;
  const rule = AGENT_LIMIT_RULES[tool.name] ?? "account";
  if (rule === "account") {
    throw new AppError(
      "forbidden",
      `This connection is limited to the agent ${agentId}, and ${tool.name} acts on the whole account. Use an API key, or connect again for the whole account.`,
    );
  }
  if (rule === "open") return () => tool.run(context, args);
  if (rule === "only_agent") {
    return async () => {
      const offset = Number(args.offset ?? 0);
      return { data: offset === 0 ? [await getAgent(core, accountId, agentId)] : [], limit: Number(args.limit ?? 20), offset, has_more: false };
    };
  }
  const takesAgent = tool.input.some((part) => "agent_id" in part.shape);
  if (typeof args.agent_id === "string" && args.agent_id !== agentId) throw notFound("agent", args.agent_id);
  if (typeof args.call_id === "string" && (await loadCall(core.db, accountId, args.call_id)).agentId !== agentId) throw notFound("call", args.call_id);
  if (typeof args.number_id === "string" && (await loadNumber(core.db, accountId, args.number_id)).agentId !== agentId)
    throw notFound("number", args.number_id);
  if (rule === "inbound" && typeof args.to_number === "string" && (await agentAnswering(core.db, accountId, args.to_number)) !== agentId) {
    throw notFound("active number", args.to_number);
  }
  const confined = takesAgent && args.agent_id === undefined ? { ...args, agent_id: agentId } : args;
  return () => tool.run(context, confined);
}
