import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { feedback } from "../../core/db/schema/feedback.js";
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

/** A client for a fresh account, so list tests see only their own reports. */
async function freshApi(): Promise<Api> {
  return api.withKey((await createAccount(service.core)).apiKey);
}

const fieldsOf = (res: { body: any }) => res.body.errors.map((e: any) => e.field).sort();

describe("submitting a report", () => {
  it("files a report with only category and message, defaulting the rest", async () => {
    const res = await api.post("/v1/feedback", { category: "bug", message: "The call never rang." });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      feedback_id: expect.stringMatching(/^fb_[0-9a-z]{26}$/),
      category: "bug",
      message: "The call never rang.",
      subject: null,
      severity: "normal",
      agent_id: null,
      contact_email: null,
      status: "open",
      created_at: expect.any(String),
      updated_at: res.body.created_at,
    });
  });

  it("keeps every optional field, including one of my agents", async () => {
    const { body: agent } = await api.post("/v1/agents", { name: "Reported" });
    const input = {
      category: "difficulty",
      message: "  Indented:\n    at placeCall (calls.ts:10)",
      subject: "Placing a call from the CLI",
      severity: "critical",
      agent_id: agent.agent_id,
      contact_email: "ada@example.com",
    };
    const res = await api.post("/v1/feedback", input);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...input, status: "open" });
  });

  it("answers 422 naming category and message when they are missing", async () => {
    const res = await api.post("/v1/feedback", {});
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("validation_error");
    expect(fieldsOf(res)).toEqual(["category", "message"]);
    expect(res.body.errors).toEqual([
      { field: "category", in: "body", message: "is required" },
      { field: "message", in: "body", message: "is required" },
    ]);
  });

  it("answers 422 naming each bad enum and the bad e-mail address in one answer", async () => {
    const res = await api.post("/v1/feedback", { category: "complaint", message: "m", severity: "urgent", contact_email: "not-an-address" });
    expect(res.status).toBe(422);
    expect(fieldsOf(res)).toEqual(["category", "contact_email", "severity"]);
  });

  it.each([
    [{ message: "" }, "message"],
    [{ message: "   \n " }, "message"],
    [{ message: "x".repeat(10_001) }, "message"],
    [{ subject: "s".repeat(201) }, "subject"],
    [{ subject: "" }, "subject"],
    [{ status: "resolved" }, "status"],
    [{ feedback_id: "fb_mine" }, "feedback_id"],
    [{ agent_id: 42 }, "agent_id"],
  ])("answers 422 for %j", async (override, field) => {
    const res = await api.post("/v1/feedback", { category: "feedback", message: "fine", ...override });
    expect(res.status).toBe(422);
    expect(fieldsOf(res)).toEqual([field]);
  });

  it("accepts a message of exactly 10,000 characters and a subject of 200", async () => {
    const res = await api.post("/v1/feedback", { category: "feedback", message: "x".repeat(10_000), subject: "s".repeat(200) });
    expect(res.status).toBe(201);
    expect(res.body.message).toHaveLength(10_000);
  });

  it("answers 404 for another account's agent, or a missing one, and files nothing", async () => {
    const mallory = await freshApi();
    const { body: theirs } = await mallory.post("/v1/agents", { name: "Not yours" });
    const reporter = await freshApi();
    for (const agent_id of [theirs.agent_id, "agt_00000000000000000000000000", "nonsense"]) {
      const res = await reporter.post("/v1/feedback", { category: "bug", message: "about that agent", agent_id });
      expect(res.status, agent_id).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
    expect((await reporter.get("/v1/feedback")).body.data).toEqual([]);
  });

  it("answers 401 without a key, on both routes", async () => {
    const anonymous = api.withKey(undefined);
    for (const res of [await anonymous.post("/v1/feedback", { category: "bug", message: "m" }), await anonymous.get("/v1/feedback")]) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe("unauthorized");
    }
  });
});

describe("listing my reports", () => {
  it("lists newest first, and pages with limit, offset and has_more", async () => {
    const mine = await freshApi();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await mine.post("/v1/feedback", { category: "feedback", message: `note ${i}` })).body.feedback_id);
    const all = await mine.get("/v1/feedback");
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ limit: 20, offset: 0, has_more: false });
    expect(all.body.data.map((f: any) => f.feedback_id)).toEqual([...ids].reverse());
    const first = await mine.get("/v1/feedback", { query: { limit: 2 } });
    expect(first.body).toMatchObject({ limit: 2, offset: 0, has_more: true });
    expect(first.body.data.map((f: any) => f.feedback_id)).toEqual([ids[4], ids[3]]);
    const last = await mine.get("/v1/feedback", { query: { limit: 2, offset: 4 } });
    expect(last.body).toMatchObject({ offset: 4, has_more: false });
    expect(last.body.data.map((f: any) => f.feedback_id)).toEqual([ids[0]]);
  });

  it("filters by category and by status, alone and together", async () => {
    const mine = await freshApi();
    const file = async (category: string) => (await mine.post("/v1/feedback", { category, message: category })).body.feedback_id as string;
    const bug = await file("bug");
    const wish = await file("feature_request");
    const fixed = await file("bug");
    // Status changes are made by the people running the service, not through the API.
    await service.core.db.update(feedback).set({ status: "resolved" }).where(eq(feedback.feedbackId, fixed));
    const ids = async (query: Record<string, string>) => (await mine.get("/v1/feedback", { query })).body.data.map((f: any) => f.feedback_id);
    expect(await ids({ category: "bug" })).toEqual([fixed, bug]);
    expect(await ids({ category: "feature_request" })).toEqual([wish]);
    expect(await ids({ category: "difficulty" })).toEqual([]);
    expect(await ids({ status: "open" })).toEqual([wish, bug]);
    expect(await ids({ status: "resolved" })).toEqual([fixed]);
    expect(await ids({ category: "bug", status: "open" })).toEqual([bug]);
    expect(await ids({ category: "feature_request", status: "resolved" })).toEqual([]);
  });

  it.each([
    [{ category: "complaint" }, "category"],
    [{ status: "closed" }, "status"],
    [{ limit: 101 }, "limit"],
    [{ offset: -1 }, "offset"],
    [{ severity: "high" }, "severity"],
  ])("answers 422 for list query %j", async (query, field) => {
    const res = await api.get("/v1/feedback", { query });
    expect(res.status).toBe(422);
    expect(fieldsOf(res)).toEqual([field]);
  });

  it("never shows one account's reports to another", async () => {
    const mine = await freshApi();
    const theirs = await freshApi();
    const { body: secret } = await mine.post("/v1/feedback", { category: "bug", message: "private", contact_email: "me@example.com" });
    await theirs.post("/v1/feedback", { category: "bug", message: "their own" });
    const seen = (await theirs.get("/v1/feedback", { query: { limit: 100 } })).body.data.map((f: any) => f.feedback_id);
    expect(seen).toHaveLength(1);
    expect(seen).not.toContain(secret.feedback_id);
    expect((await mine.get("/v1/feedback")).body.data.map((f: any) => f.feedback_id)).toEqual([secret.feedback_id]);
  });
});
