import type { Config } from "../core/config.js";
import { knownScopes, type OAuthScope } from "../core/oauth/scopes.js";
import { toolsFor } from "./server.js";
import type { Tool } from "./tool.js";

/**
 * The OAuth scope a tool needs (core/oauth/scopes.ts), from its hints: what spends the balance
 * needs agentline:spend, what only reads agentline:read, every other change agentline:write.
 */
export function toolScope(tool: Pick<Tool, "hints">): OAuthScope {
  if (tool.hints.spendsMoney) return "agentline:spend";
  if (tool.hints.readOnly) return "agentline:read";
  return "agentline:write";
}

/**
 * The first scope a JSON-RPC message (or batch) needs that `granted` lacks: a tools/call of a
 * tool beyond them. Unknown tools and other methods need none (the MCP server answers them).
 */
export function missingScope(config: Pick<Config, "carrier">, body: unknown, granted: readonly OAuthScope[]): OAuthScope | undefined {
  const tools = new Map(toolsFor(config).map((tool) => [tool.name, tool]));
  for (const message of Array.isArray(body) ? body : [body]) {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: { name?: unknown } };
    if (method !== "tools/call" || typeof params?.name !== "string") continue;
    const tool = tools.get(params.name);
    if (tool && !granted.includes(toolScope(tool))) return toolScope(tool);
  }
  return undefined;
}

/** The scopes to sign in again with for a step-up: those held plus the one missing. */
export function steppedUpScope(granted: readonly OAuthScope[], missing: OAuthScope): string {
  return knownScopes([...granted, missing].join(" ")).join(" ");
}
