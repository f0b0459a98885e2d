import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Ajv2020 } from "ajv/dist/2020.js";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { projectRoot } from "../../harness/process.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let document: any;
// Inside the project, so the generated client resolves openapi-fetch from its node_modules.
const scratch = join(projectRoot, ".scratch", `openapi-client-${process.pid}`);

beforeAll(async () => {
  service = await startTestService({ env: { TOPUP_MIN_USD: "1.25", TOPUP_MAX_USD: "250" } });
  document = await (await fetch(`${service.baseUrl}/openapi.json`)).json();
  mkdirSync(scratch, { recursive: true });
});
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await service?.stop();
});

const operations = () =>
  Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );

describe("/openapi.json under third-party tools", () => {
  // Both spawn real tools: a few seconds each on an idle machine, so generous timeouts for a busy one.
  it("lints with Redocly's recommended rules: no errors (security-defined included)", { timeout: 90_000 }, async () => {
    const file = join(scratch, "openapi.json");
    writeFileSync(file, JSON.stringify(document));
    const cli = join(projectRoot, "node_modules", "@redocly", "cli", "bin", "cli.js");
    const { stdout } = await promisify(execFile)(process.execPath, [cli, "lint", file, "--format=json"], { cwd: scratch, maxBuffer: 16 * 1024 * 1024 }).catch(
      (failed: { stdout: string }) => failed,
    );
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; severity: string; message: string }>;
    };
    const errors = report.problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it("generates types with openapi-typescript's defaults that a client for the most used operations compiles against", { timeout: 120_000 }, async () => {
    writeFileSync(join(scratch, "api.d.ts"), astToString(await openapiTS(document)));
    const client = join(scratch, "client.ts");
    writeFileSync(
      client,
      `import createClient from "openapi-fetch";
import type { paths } from "./api.js";

/** Sign-up to a first call, as a newcomer would write it against the generated types: only the required fields. */
export async function firstCall(baseUrl: string, apiKey: string) {
  const api = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${apiKey}\` } });
  const agent = await api.POST("/v1/agents", { body: { name: "Generated" } });
  const agentId: string = agent.data!.agent_id;
  const number = await api.POST("/v1/numbers", { body: { agent_id: agentId }, params: { header: { "Idempotency-Key": "buy-1" } } });
  const phone: string = number.data!.phone_number;
  const call = await api.POST("/v1/calls", { body: { agent_id: agentId, to_number: "+14155550142" } });
  const callId: string = call.data!.call_id;
  await api.POST("/v1/sandbox/calls/{call_id}/say", { params: { path: { call_id: callId } }, body: { text: "Hello?" } });
  const events = await api.GET("/v1/events", { params: { query: { agent_id: agentId } } });
  const turn = events.data!.data.find((event) => event.event_type === "call.utterance");
  const pushed = await api.POST("/v1/calls/{call_id}/context", { params: { path: { call_id: callId }, query: { turn_id: turn!.turn_id! } }, body: { text: "Hi there" } });
  const hook = await api.POST("/v1/webhooks", { body: { agent_id: agentId, url: "https://hooks.example.com/agentline" } });
  const refused = await api.POST("/v1/agents", { body: { name: "" } });
  const where: "query" | "body" | "header" | "path" | undefined = refused.error?.errors?.[0]?.in;
  return { phone, spoken: pushed.data!.turn_status, secretChanged: hook.data!.secret_changed, where, problem: refused.response.status };
}
`,
    );
    const program = ts.createProgram([client], {
      strict: true,
      noEmit: false,
      outDir: scratch,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
      types: [],
      skipLibCheck: true,
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(diagnostics).toEqual([]);
    program.emit();
    writeFileSync(join(scratch, "package.json"), JSON.stringify({ type: "module" }));

    // The compiled client runs against the service, as generated.
    const { firstCall } = await import(join(scratch, "client.js"));
    const account = await createAccount(service.core);
    expect(await firstCall(service.baseUrl, account.apiKey)).toEqual({
      phone: expect.stringMatching(/^\+1/),
      spoken: "answered",
      secretChanged: true,
      where: "body",
      problem: 422,
    });
  });
});

describe("/openapi.json is as strict as the server", () => {
  it("states the formats of from and to, and that they go together", () => {
    const params = document.paths["/v1/billing/expenditure"].get.parameters;
    for (const name of ["from", "to"]) {
      const param = params.find((p: any) => p.name === name);
      expect(param.schema.anyOf).toEqual([{ format: "date" }, { format: "date-time" }]);
      expect(param.description).toMatch(/Only together with/);
    }
  });

  it("states the capabilities rules in a schema a validator enforces", () => {
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(document.components.requestBodies.SetWebhookRequest.content["application/json"].schema);
    const base = { agent_id: "agt_1", url: "https://example.com/hook" };
    expect(validate({ ...base, capabilities: ["briefing"] })).toBe(false);
    expect(validate({ ...base, protocol: "service-relay/1", capabilities: ["briefing"] })).toBe(false);
    expect(validate({ ...base, protocol: "service-relay/2", capabilities: ["briefing", "briefing"] })).toBe(false);
    expect(validate({ ...base, secret: "s".repeat(20), rotate_secret: true })).toBe(false);
    expect(validate({ ...base, protocol: "service-relay/2", capabilities: ["briefing", "supports_amend"] })).toBe(true);
    expect(validate({ ...base, secret: "s".repeat(20) })).toBe(true);
    expect(validate(base)).toBe(true);
  });

  it("states this server's top-up bounds", () => {
    for (const method of ["get", "post"]) {
      const amount = document.paths["/v1/billing/topup/x402/pay"][method].parameters.find((p: any) => p.name === "amount");
      expect(amount.description).toBe("USD to add to the balance: from 1.250000 to 250.000000, at most 6 decimals");
      expect(amount.schema.pattern).toBeDefined();
    }
  });

  it("documents the headers the server sends: X-Request-Id always, Retry-After, the challenges and the receipts", () => {
    expect(Object.keys(document.components.headers).sort()).toEqual(
      [
        "Cache-Control",
        "Idempotent-Replayed",
        "PAYMENT-REQUIRED",
        "PAYMENT-RESPONSE",
        "Payment-Receipt",
        "Retry-After",
        "WWW-Authenticate",
        "X-PAYMENT-RESPONSE",
        "X-Payment-Test-Money",
        "X-Request-Id",
      ].sort(),
    );
    const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
    for (const { path, method, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        expect(response.headers?.["X-Request-Id"], `${method} ${path} ${status}`).toEqual(ref("X-Request-Id"));
        if (status === "429" || status === "503") expect(response.headers["Retry-After"]).toEqual(ref("Retry-After"));
        if (status === "401") expect(response.headers["WWW-Authenticate"]).toEqual(ref("WWW-Authenticate"));
        if (status === "402") expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(["PAYMENT-REQUIRED", "WWW-Authenticate"]));
      }
      if (op["x-payment-info"]) {
        const success = Object.entries(op.responses as Record<string, any>).find(([status]) => status.startsWith("2"))![1];
        expect(Object.keys(success.headers), `${method} ${path}`).toEqual(
          expect.arrayContaining(["PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE", "Payment-Receipt"]),
        );
      }
    }
    expect(document.paths["/v1/auth/otp"].post.responses["429"].headers["Retry-After"]).toEqual(ref("Retry-After"));
    expect(document.paths["/v1/events"].get.responses["200"].headers["Cache-Control"]).toEqual(ref("Cache-Control"));
  });

  it("says where each field of a 422 was, and states every operation's security", () => {
    const field = document.components.schemas.FieldProblem;
    expect(field.required).toEqual(["field", "in", "message"]);
    expect(field.properties.in.enum).toEqual(["query", "body", "header", "path"]);
    for (const { path, method, op } of operations()) expect(Array.isArray(op.security), `${method} ${path}`).toBe(true);
    expect(document.paths["/health"].get.security).toEqual([]);
  });

  it("keeps fields with defaults optional for generated clients: request bodies live in components.requestBodies", () => {
    expect(document.paths["/v1/numbers"].post.requestBody).toEqual({ $ref: "#/components/requestBodies/BuyNumberRequest" });
    const body = document.components.requestBodies.BuyNumberRequest.content["application/json"].schema;
    expect(body.required).toEqual(["agent_id"]);
    expect(body.properties.number_type.default).toBe("local");
  });
});
