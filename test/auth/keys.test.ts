import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let owner: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  owner = await createAccount(service.core);
  api = new Api(service.baseUrl, owner.apiKey);
});
afterAll(() => service?.stop());

describe("API keys", () => {
  it("mints a named key shown once, which then works and is listed without the secret", async () => {
    const minted = await api.post("/v1/auth/keys", { name: "deploy" });
    expect(minted.status).toBe(201);
    expect(minted.body).toMatchObject({ name: "deploy", current: false, last_used_at: null });
    expect(minted.body.api_key.startsWith(minted.body.prefix)).toBe(true);
    expect(minted.body.api_key.endsWith(minted.body.last_four)).toBe(true);

    const used = await api.get("/v1/auth/keys", { key: minted.body.api_key });
    expect(used.status).toBe(200);
    expect(used.text).not.toContain(minted.body.api_key);
    const entry = used.body.data.find((k: any) => k.key_id === minted.body.key_id);
    expect(entry).toMatchObject({ name: "deploy", current: true });
    expect(entry.last_used_at).not.toBeNull();
    expect(used.body.data.find((k: any) => k.key_id === owner.keyId)).toMatchObject({ current: false });
  });

  it("mints a key with no body at all", async () => {
    const res = await api.request("POST", "/v1/auth/keys");
    expect(res.status).toBe(201);
    expect(res.body.name).toBeNull();
  });

  it("revokes another key at once, and a second revoke is a 404", async () => {
    const { body: spare } = await api.post("/v1/auth/keys", { name: "spare" });
    expect((await api.get("/v1/agents", { key: spare.api_key })).status).toBe(200);
    const revoked = await api.delete(`/v1/auth/keys/${spare.key_id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ key_id: spare.key_id, revoked: true });
    expect((await api.get("/v1/agents", { key: spare.api_key })).status).toBe(401);
    expect((await api.get("/v1/auth/keys")).body.data.map((k: any) => k.key_id)).not.toContain(spare.key_id);
    expect((await api.delete(`/v1/auth/keys/${spare.key_id}`)).status).toBe(404);
  });

  it("refuses to let a key revoke itself", async () => {
    const res = await api.delete(`/v1/auth/keys/${owner.keyId}`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("cannot_revoke_current_key");
    expect((await api.get("/v1/agents")).status).toBe(200);
  });

  it("answers 404 for another account's key and leaves it working", async () => {
    const other = await createAccount(service.core);
    const res = await api.delete(`/v1/auth/keys/${other.keyId}`);
    expect(res.status).toBe(404);
    expect((await api.get("/v1/agents", { key: other.apiKey })).status).toBe(200);
    expect((await api.get("/v1/auth/keys")).body.data.map((k: any) => k.key_id)).not.toContain(other.keyId);
  });

  it("validates the key name", async () => {
    const res = await api.post("/v1/auth/keys", { name: "x".repeat(101) });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].field).toBe("name");
  });
});
