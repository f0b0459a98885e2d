import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { spawnService } from "../../harness/process.js";
import { startSmtpServer } from "../support/smtp.js";

// The newcomer's path: `npm start` on embedded defaults (PGlite in DATA_DIR), mail over SMTP.
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let dataDir: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  dataDir = mkdtempSync(join(tmpdir(), "agentline-e2e-"));
});
afterAll(async () => {
  await smtp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("npm start, end to end", () => {
  it("signs in by mailed code, manages keys and agents, and keeps them across a restart", { timeout: 180_000 }, async () => {
    const env = { DATA_DIR: dataDir, SMTP_URL: smtp.url };
    let service = await spawnService(env);
    let api = new Api(service.baseUrl);
    const email = "newcomer@example.com";

    expect((await api.post("/v1/auth/otp", { email })).status).toBe(200);
    const otp = await smtp.codeFor(email);
    const signIn = await api.post("/v1/auth/verify", { email, otp });
    expect(signIn.status).toBe(200);
    expect(signIn.body.account_created).toBe(true);
    api = api.withKey(signIn.body.api_key);

    const minted = await api.post("/v1/auth/keys", { name: "ci" });
    expect(minted.status).toBe(201);
    const spare = await api.post("/v1/auth/keys");
    expect(spare.status).toBe(201);
    const listed = await api.get("/v1/auth/keys");
    expect(listed.body.data.map((k: any) => k.key_id).sort()).toEqual([signIn.body.key_id, minted.body.key_id, spare.body.key_id].sort());
    expect((await api.delete(`/v1/auth/keys/${spare.body.key_id}`)).status).toBe(200);
    expect((await api.get("/v1/agents", { key: spare.body.api_key })).status).toBe(401);

    const agent = await api.post("/v1/agents", { name: "Receptionist" });
    expect(agent.status).toBe(201);
    expect((await api.patch(`/v1/agents/${agent.body.agent_id}`, { description: "Takes messages" })).status).toBe(200);
    const doomed = await api.post("/v1/agents", { name: "Doomed" });
    expect((await api.delete(`/v1/agents/${doomed.body.agent_id}`)).status).toBe(200);
    expect((await api.get("/v1/agents")).body.data).toHaveLength(1);

    expect(await service.stop()).toBe(0);

    service = await spawnService(env);
    api = new Api(service.baseUrl, signIn.body.api_key);
    const keys = await api.get("/v1/auth/keys");
    expect(keys.body.data.map((k: any) => k.key_id).sort()).toEqual([signIn.body.key_id, minted.body.key_id].sort());
    expect((await api.get("/v1/agents", { key: minted.body.api_key })).status).toBe(200);
    expect((await api.get("/v1/agents", { key: spare.body.api_key })).status).toBe(401);
    const agents = await api.get("/v1/agents");
    expect(agents.body.data).toEqual([expect.objectContaining({ agent_id: agent.body.agent_id, name: "Receptionist", description: "Takes messages" })]);

    // Signing in again reaches the same account.
    await api.post("/v1/auth/otp", { email });
    const again = await api.post("/v1/auth/verify", { email, otp: await smtp.codeFor(email) }, { key: null });
    expect(again.body).toMatchObject({ account_id: signIn.body.account_id, account_created: false });
    expect(await service.stop()).toBe(0);
  });

  it("finishes a request in flight when sent SIGTERM, then exits 0", { timeout: 120_000 }, async () => {
    const service = await spawnService({ DATA_DIR: join(dataDir, "drain") }, ["node", "dist/bin/agentline.js", "serve"]);
    const body = JSON.stringify({ email: "slow@example.com" });
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: service.port,
          method: "POST",
          path: "/v1/auth/otp",
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          let text = "";
          res.on("data", (d) => (text += d));
          res.on("end", () => resolve({ status: res.statusCode!, text }));
        },
      );
      req.on("error", reject);
      // Half the body now, the rest after the signal: the request is in flight when SIGTERM lands.
      req.write(body.slice(0, 10));
      setTimeout(() => {
        service.signal("SIGTERM");
        setTimeout(() => req.end(body.slice(10)), 500);
      }, 300);
    });
    const { status, text } = await answer;
    expect(status, text).toBe(200);
    expect(await service.exited).toBe(0);
    expect(service.output()).toContain('"msg":"stopped"');
  });

  it("refuses a second process on the same DATA_DIR instead of corrupting it", { timeout: 120_000 }, async () => {
    const dir = join(dataDir, "shared");
    const first = await spawnService({ DATA_DIR: dir }, ["node", "dist/bin/agentline.js", "serve"]);
    await expect(spawnService({ DATA_DIR: dir }, ["node", "dist/bin/agentline.js", "serve"])).rejects.toThrow(/is in use by process \d+/);
    expect((await fetch(first.baseUrl + "/health")).status).toBe(200);
    expect(await first.stop()).toBe(0);
    // A lock left behind by a killed process does not block the next start.
    const killed = await spawnService({ DATA_DIR: dir }, ["node", "dist/bin/agentline.js", "serve"]);
    killed.kill();
    await killed.exited;
    const next = await spawnService({ DATA_DIR: dir }, ["node", "dist/bin/agentline.js", "serve"]);
    expect((await fetch(next.baseUrl + "/health")).status).toBe(200);
    expect(await next.stop()).toBe(0);
  });

  it("refuses to start on a bad setting with one line naming the variable", { timeout: 60_000 }, async () => {
    await expect(spawnService({ PORT: "eighty" }, ["node", "dist/bin/agentline.js", "serve"])).rejects.toThrow(
      /exited with 1 before listening:\nagentline: Invalid configuration: PORT="eighty": [^\n]+\n$/,
    );
  });
});
