import { z } from "zod";
import type { Core } from "../core/context.js";

/** Who a tool call acts for: the account of the Bearer API key, agent token or OAuth access token. */
export interface ToolContext {
  core: Core;
  accountId: string;
  /** Set for an OAuth connection limited to one agent (mcp/agent-limit.ts applies it). */
  agentId?: string | null;
  /** Aborted when the client cancels the call or goes away, or the credential is revoked (long waits stop early). */
  signal: AbortSignal;
  /** Aborted once the connection's credential is revoked, on any process. */
  revoked: AbortSignal;
}

/** MCP's standard hints, plus whether the tool charges the balance. */
export interface ToolHints {
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  /** Charges the prepaid balance (numbers, calls). */
  spendsMoney?: boolean;
  /** Reaches outside the account: the telephone network, a person on a call, a webhook URL. */
  openWorld?: boolean;
}

type Merge<Parts extends readonly z.ZodObject[]> = Parts extends readonly [infer First extends z.ZodObject, ...infer Rest extends readonly z.ZodObject[]]
  ? z.infer<First> & Merge<Rest>
  : unknown;

/**
 * One MCP tool. Its input is the route's own schemas (path parameters, query, body): their fields
 * are merged into one object for the tool's inputSchema, and each part validates its own fields,
 * so a tool accepts and refuses exactly what the REST route does.
 */
export interface Tool {
  name: string;
  title: string;
  /** What it does and when to use it (the model chooses tools by this). */
  description: string;
  input: readonly z.ZodObject[];
  /** Every result is an object (lists and transcripts are wrapped). */
  output: z.ZodObject;
  hints: ToolHints;
  run(context: ToolContext, args: Record<string, unknown>): Promise<unknown>;
}

export function defineTool<const Parts extends readonly z.ZodObject[], Output extends z.ZodObject>(spec: {
  name: string;
  title: string;
  description: string;
  input: Parts;
  output: Output;
  hints: ToolHints;
  run(context: ToolContext, args: Merge<Parts>): Promise<z.input<Output>>;
}): Tool {
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(spec.name)) throw new Error(`tool name ${spec.name} is not snake_case of at most 40 characters`);
  return spec as unknown as Tool;
}

/** A tool input that has no fields. */
export const NoInput = z.strictObject({});
