import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect, inject } from "vitest";
import { projectRoot } from "../../harness/process.js";
import { freshDatabase, onPostgres } from "./service.js";

/** An SDK client plus what the tests look at: each result, checked for the MCP contract on the way. */
export interface McpSession {
  client: Client;
  /** Calls a tool that must succeed; returns its structuredContent. */
  ok(name: string, args?: Record<string, unknown>): Promise<any>;
  /** Calls a tool that must fail as a tool (isError), never as a protocol error; returns its text. */
  fails(name: string, args?: Record<string, unknown>): Promise<string>;
  /** Every tool name called successfully so far. */
  succeeded: Set<string>;
  /** Errors the transport reported (a non-JSON line on stdio's stdout would land here). */
  transportErrors: Error[];
  close(): Promise<void>;
}

function session(client: Client, transportErrors: Error[], close: () => Promise<void>): McpSession {
  const succeeded = new Set<string>();
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  return {
    client,
    succeeded,
    transportErrors,
    close,
    async ok(name, args = {}) {
      const result = await call(name, args);
      const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
      expect(result.isError ?? false, `${name} failed: ${text}`).toBe(false);
      // The same JSON as text, for clients that read only content.
      expect(JSON.parse(text)).toEqual(result.structuredContent);
      succeeded.add(name);
      return result.structuredContent;
    },
    async fails(name, args = {}) {
      const result = await call(name, args);
      expect(result.isError, `${name} should have failed`).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
      expect(text).toMatch(/\nNext step: \S/);
      return text;
    },
  };
}

/** A client connected to the gateway's /mcp with a Bearer token. */
export async function httpMcp(baseUrl: string, token: string): Promise<McpSession> {
  const client = new Client({ name: "agentline-tests", version: "1.0.0" });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", baseUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return session(client, errors, () => client.close());
}

/** The built CLI, run as a local MCP client runs it. */
const BIN = join(projectRoot, "dist", "bin", "agentline.js");

/** A database the stdio server can open from its own process: a PostgreSQL clone, or a PGlite directory. */
export async function databaseForProcess(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (onPostgres) {
    const database = await freshDatabase();
    return { env: { DATABASE_URL: database.url! }, drop: database.drop };
  }
  // The migrated template, written out as a data directory (quicker than a first start's initdb).
  const dataDir = mkdtempSync(join(tmpdir(), "agentline-mcp-"));
  const pglite = await PGlite.create({ dataDir, loadDataDir: new Blob([readFileSync(inject("pgliteTemplate"))]) });
  await pglite.close();
  return { env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** Runs `agentline admin ...` against env's database; returns its JSON output. */
export function adminCommand(env: Record<string, string>, args: string[]): any {
  const run = spawnSync(process.execPath, [BIN, "admin", ...args], { env: { PATH: process.env.PATH!, ...env }, encoding: "utf8", timeout: 60_000 });
  if (run.status !== 0) throw new Error(`agentline admin ${args.join(" ")} exited ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** A client that starts `agentline mcp` as its stdio server, as Claude Desktop would. */
export async function stdioMcp(env: Record<string, string>): Promise<McpSession & { stderr(): string }> {
  const client = new Client({ name: "agentline-tests", version: "1.0.0" });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    env: { PATH: process.env.PATH!, LOG_LEVEL: "info", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr!.on("data", (chunk) => (stderr += chunk));
  await client.connect(transport);
  return { ...session(client, errors, () => client.close()), stderr: () => stderr };
}
