import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Api } from "../../harness/api.js";
import { type ServiceProcess, spawnService } from "../../harness/process.js";
import { createTestDatabase } from "../support/postgres.js";
import { onPostgres } from "../support/service.js";

// Each test claims its own client address (the processes trust the loopback proxy), so the
// per-IP limit of one test does not spill into the next.
const from = (ip: string) => ({ headers: { "x-forwarded-for": ip } });

// Two gateway processes on one PostgreSQL database: the limits are counted in the database, so a
// client switching between processes gets no more than one process would give it.
describe.runIf(onPostgres)("sign-in limits across two processes (PostgreSQL)", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let apis: Api[];

  beforeAll(async () => {
    database = await createTestDatabase(inject("postgresTemplate")!);
    const env = { DATABASE_URL: database.url, LOG_LEVEL: "info", TRUST_PROXY: "loopback" };
    [a, b] = await Promise.all([spawnService(env, ["node", "dist/bin/agentline.js", "serve"]), spawnService(env, ["node", "dist/bin/agentline.js", "serve"])]);
    apis = [new Api(a.baseUrl), new Api(b.baseUrl)];
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  it("the 4th code request for one address gets 429, whichever process serves it", async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await apis[i % 2]!.post("/v1/auth/otp", { email: "x@example.com" }, from("203.0.113.1"))).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await apis[0]!.post("/v1/auth/otp", { email: "x@example.com" }, from("203.0.113.1"))).status).toBe(429);
  });

  it("the 6th verify attempt for one address gets 429 across processes", async () => {
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await apis[i % 2]!.post("/v1/auth/verify", { email: "y@example.com", otp: "000000" })).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429]);
  });

  it("concurrent requests spread over both processes let exactly 3 through", async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => apis[i % 2]!.post("/v1/auth/otp", { email: "z@example.com" }, from("203.0.113.3"))));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
  });

  it("the 6th code request from one IP gets 429 across processes", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await apis[i % 2]!.post("/v1/auth/otp", { email: `ip${i}@example.com` }, from("203.0.113.4"))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
