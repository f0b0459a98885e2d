import { Agent, request } from "node:http";
import { expect } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import type { TestService } from "./service.js";

/**
 * Another tenant of the service under attack: an account with one agent, which a hostile-client
 * test asks to be served normally during and after the attack. `check()` reads the agent back
 * (a signed-in GET that touches the database) and returns how long it took.
 */
export interface Bystander {
  account: TestAccount;
  agentId: string;
  /** One GET of the bystander's agent; fails the test unless it is a 200 with the agent. Returns its latency in ms. */
  check(): Promise<number>;
  /** `n` checks one after another; their latencies in ms, in order. */
  sample(n: number): Promise<number[]>;
}

export interface BystanderOptions {
  /**
   * Every GET over one kept-alive connection, as a client with its connection open sends it. A
   * flood of connections fills the kernel's accept queue, and a new connection waits its turn there
   * before the service sees it; fetch's pool may open one whenever the test's own loop stalls.
   */
  oneConnection?: boolean;
}

/**
 * `service`: a service started in this test, or any service reached at `baseUrl` whose database
 * `core.db` is. The account is made here, or given (a service in its own process: made in its
 * database before it started).
 */
export async function bystander(
  service: Pick<TestService, "baseUrl"> & { core?: Pick<TestService["core"], "db"> },
  given?: TestAccount,
  options: BystanderOptions = {},
): Promise<Bystander> {
  const account = given ?? (await createAccount(service.core!));
  const api = new Api(service.baseUrl, account.apiKey);
  const created = await api.post("/v1/agents", { name: "bystander" });
  expect(created.status).toBe(201);
  const agentId = created.body.agent_id as string;
  const path = `/v1/agents/${agentId}`;
  const get = options.oneConnection ? getOverOneConnection(service.baseUrl, account.apiKey) : (p: string) => api.get(p, { unchecked: true });
  const check = async () => {
    const started = performance.now();
    const res = await get(path);
    const elapsed = performance.now() - started;
    expect(res.status, `the bystander's GET answered ${res.status}: ${res.text.slice(0, 200)}`).toBe(200);
    expect(res.body.agent_id).toBe(agentId);
    return elapsed;
  };
  return {
    account,
    agentId,
    check,
    async sample(n) {
      const latencies: number[] = [];
      for (let i = 0; i < n; i++) latencies.push(await check());
      return latencies;
    },
  };
}

/** GETs with the key, over one connection that stays open between them. */
function getOverOneConnection(baseUrl: string, apiKey: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return (path: string) =>
    new Promise<{ status: number; body: any; text: string }>((resolve, reject) => {
      const req = request(new URL(path, baseUrl), { agent, headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: the status check names what came back
          }
          resolve({ status: res.statusCode ?? 0, body, text });
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
}
