import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../../core/db/schema/accounts.js";
import { resolveVoiceId } from "../../core/voices/account-voice.js";
import { SYSTEM_DEFAULT_VOICE_ID, VOICES } from "../../core/voices/catalogue.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let alice: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  alice = await createAccount(service.core);
  api = new Api(service.baseUrl, alice.apiKey);
});
afterAll(() => service?.stop());

/** A client for a fresh account, so tests of the account default do not share state. */
async function freshApi(): Promise<{ account: TestAccount; api: Api }> {
  const account = await createAccount(service.core);
  return { account, api: api.withKey(account.apiKey) };
}

describe("the voice catalogue", () => {
  it("lists every preset in one default page", async () => {
    const res = await api.get("/v1/voices");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ limit: 20, offset: 0, has_more: false });
    expect(res.body.data).toEqual(VOICES);
    expect(res.body.data.length).toBeGreaterThanOrEqual(10);
    expect(res.body.data.length).toBeLessThanOrEqual(14);
  });

  it("maps presets onto the provider voices Twilio ConversationRelay names", async () => {
    const { body } = await api.get("/v1/voices");
    const byId = Object.fromEntries(body.data.map((v: any) => [v.voice_id, v]));
    expect(byId.joanna).toMatchObject({ provider: "amazon", provider_voice: "Joanna-Neural", language: "en-US", gender: "female" });
    expect(byId["journey-o"]).toMatchObject({ provider: "google", provider_voice: "en-US-Journey-O" });
    expect(byId.mark).toMatchObject({ provider: "elevenlabs", provider_voice: "UgBBYS2sOqTuMpoF3BR0" });
  });

  it("covers English (US and UK), Spanish, French and German with both genders, over all three providers", async () => {
    const { body } = await api.get("/v1/voices");
    const voices: any[] = body.data;
    for (const language of ["en-US", "en-GB", "es", "fr", "de"]) {
      const speakers = voices.filter((v) => v.language === language || v.language.startsWith(`${language}-`));
      expect(new Set(speakers.map((v) => v.gender)), language).toEqual(new Set(["female", "male"]));
    }
    expect(new Set(voices.map((v) => v.provider))).toEqual(new Set(["google", "amazon", "elevenlabs"]));
    expect(new Set(voices.map((v) => v.voice_id)).size).toBe(voices.length);
    for (const v of voices) expect(v.voice_id).toMatch(/^[a-z][a-z0-9-]*$/);
  });

  it("pages the catalogue with limit and offset, the pages adding up to the whole list", async () => {
    const first = await api.get("/v1/voices", { query: { limit: 5 } });
    expect(first.body).toMatchObject({ limit: 5, offset: 0, has_more: true });
    expect(first.body.data).toEqual(VOICES.slice(0, 5));
    const pages = [first.body.data];
    for (let offset = 5; offset < VOICES.length; offset += 5) pages.push((await api.get("/v1/voices", { query: { limit: 5, offset } })).body.data);
    expect(pages.flat()).toEqual(VOICES);
    const last = await api.get("/v1/voices", { query: { limit: 5, offset: VOICES.length - 1 } });
    expect(last.body).toMatchObject({ has_more: false, data: [VOICES.at(-1)] });
  });

  it("answers 422 for an out-of-range limit", async () => {
    const res = await api.get("/v1/voices", { query: { limit: 0 } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.field)).toEqual(["limit"]);
  });
});

describe("the account default voice", () => {
  it("is the system default until the account chooses one", async () => {
    const { api } = await freshApi();
    const res = await api.get("/v1/account/voice");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ voice_id: SYSTEM_DEFAULT_VOICE_ID, source: "system", voice: VOICES.find((v) => v.voice_id === SYSTEM_DEFAULT_VOICE_ID) });
  });

  it("changes with PATCH and reads back the same", async () => {
    const { api } = await freshApi();
    const set = await api.patch("/v1/account/voice", { voice_id: "lea" });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ voice_id: "lea", source: "account", voice: { voice_id: "lea", language: "fr-FR", provider_voice: "Lea-Neural" } });
    expect((await api.get("/v1/account/voice")).body).toEqual(set.body);
    const again = await api.patch("/v1/account/voice", { voice_id: "brian" });
    expect(again.body).toMatchObject({ voice_id: "brian", source: "account" });
  });

  it("answers 422 naming voice_id for a voice outside the catalogue, and keeps the current default", async () => {
    const { api } = await freshApi();
    await api.patch("/v1/account/voice", { voice_id: "sergio" });
    for (const voice_id of ["alloy", "Sergio", "Sergio-Neural", "", 5, null]) {
      const res = await api.patch("/v1/account/voice", { voice_id });
      expect(res.status, String(voice_id)).toBe(422);
      expect(res.body.code).toBe("validation_error");
      expect(res.body.errors.map((e: any) => e.field)).toEqual(["voice_id"]);
    }
    expect((await api.get("/v1/account/voice")).body.voice_id).toBe("sergio");
  });

  it("answers 422 to a PATCH without voice_id or with an unknown field", async () => {
    const missing = await api.patch("/v1/account/voice", {});
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([{ field: "voice_id", in: "body", message: "is required" }]);
    const extra = await api.patch("/v1/account/voice", { voice_id: "amy", language: "en-GB" });
    expect(extra.status).toBe(422);
    expect(extra.body.errors).toEqual([{ field: "language", in: "body", message: "is not a recognised field" }]);
  });

  it("goes back to the system default on DELETE, and a second DELETE is harmless", async () => {
    const { api } = await freshApi();
    await api.patch("/v1/account/voice", { voice_id: "vicki" });
    const reset = await api.delete("/v1/account/voice");
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ voice_id: SYSTEM_DEFAULT_VOICE_ID, source: "system" });
    expect((await api.get("/v1/account/voice")).body).toEqual(reset.body);
    const again = await api.delete("/v1/account/voice");
    expect(again.status).toBe(200);
    expect(again.body).toEqual(reset.body);
  });

  it("reports source account even when the chosen voice is the system default", async () => {
    const { api } = await freshApi();
    const res = await api.patch("/v1/account/voice", { voice_id: SYSTEM_DEFAULT_VOICE_ID });
    expect(res.body).toMatchObject({ voice_id: SYSTEM_DEFAULT_VOICE_ID, source: "account" });
  });

  it("belongs to one account: another account's choice changes nothing here", async () => {
    const mine = await freshApi();
    const theirs = await freshApi();
    await theirs.api.patch("/v1/account/voice", { voice_id: "remi" });
    expect((await mine.api.get("/v1/account/voice")).body.source).toBe("system");
    await mine.api.patch("/v1/account/voice", { voice_id: "amy" });
    await mine.api.delete("/v1/account/voice");
    expect((await theirs.api.get("/v1/account/voice")).body.voice_id).toBe("remi");
  });

  it("answers 401 on every voice route without a key", async () => {
    const anonymous = api.withKey(undefined);
    for (const res of [
      await anonymous.get("/v1/voices"),
      await anonymous.get("/v1/account/voice"),
      await anonymous.patch("/v1/account/voice", { voice_id: "amy" }),
      await anonymous.delete("/v1/account/voice"),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe("unauthorized");
    }
  });
});

describe("the voice in effect for an agent (resolveVoiceId)", () => {
  it("is the agent's own voice, which wins over the account default", async () => {
    const { account, api } = await freshApi();
    await api.patch("/v1/account/voice", { voice_id: "amy" });
    const { body: agent } = await api.post("/v1/agents", { name: "Own voice", voice_id: "daniel" });
    expect(await resolveVoiceId(service.core.db, account.accountId, agent.voice_id)).toBe("daniel");
  });

  it("is the account default for an agent without a voice, and follows it when it changes", async () => {
    const { account, api } = await freshApi();
    const { body: agent } = await api.post("/v1/agents", { name: "No voice" });
    expect(agent.voice_id).toBeNull();
    await api.patch("/v1/account/voice", { voice_id: "lucia" });
    expect(await resolveVoiceId(service.core.db, account.accountId, agent.voice_id)).toBe("lucia");
    await api.patch("/v1/account/voice", { voice_id: "matthew" });
    expect(await resolveVoiceId(service.core.db, account.accountId, null)).toBe("matthew");
  });

  it("is the system default when neither the agent nor the account chose one", async () => {
    const { account, api } = await freshApi();
    await api.patch("/v1/account/voice", { voice_id: "jessica" });
    await api.delete("/v1/account/voice");
    expect(await resolveVoiceId(service.core.db, account.accountId, null)).toBe(SYSTEM_DEFAULT_VOICE_ID);
  });

  it("skips a stored voice that is no longer in the catalogue", async () => {
    const { account } = await freshApi();
    // Written behind the API's back: only a preset leaving the catalogue can leave such a value.
    await service.core.db.update(accounts).set({ defaultVoiceId: "retired-voice" }).where(eq(accounts.accountId, account.accountId));
    expect(await resolveVoiceId(service.core.db, account.accountId, "alloy")).toBe(SYSTEM_DEFAULT_VOICE_ID);
    const shown = await api.withKey(account.apiKey).get("/v1/account/voice");
    expect(shown.body).toMatchObject({ voice_id: SYSTEM_DEFAULT_VOICE_ID, source: "system" });
    await service.core.db.update(accounts).set({ defaultVoiceId: "vicki" }).where(eq(accounts.accountId, account.accountId));
    expect(await resolveVoiceId(service.core.db, account.accountId, "alloy")).toBe("vicki");
  });
});
