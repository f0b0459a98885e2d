import { randomBytes } from "node:crypto";
import { and, desc, eq } from "drizzle-orm";
import { loadAgent } from "../agents/agents.js";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { webhookAttempts } from "../db/schema/webhook-attempts.js";
import type { WebhookRow } from "../db/schema/webhooks.js";
import { webhooks } from "../db/schema/webhooks.js";
import { AppError } from "../errors.js";
import { recordEvent } from "../events/events.js";
import { newId } from "../ids.js";
import { extendCurrentDeadline } from "../request-scope.js";
import { type Pagination, toPage } from "../schemas/common.js";
import { IN_FLIGHT } from "./deliveries.js";
import { isDelivered } from "./http-post.js";
import type { Capability, SetWebhookBody, SetWebhookResult, Webhook } from "./schemas.js";
import { openSecret, sealSecret } from "./secret-box.js";
import { webhookUrlProblem } from "./url-guard.js";

function secretKey(core: Core): Buffer {
  return core.secrets.derive("webhook-secrets");
}

/** The secret a webhook signs with, decrypted. */
export function webhookSecret(core: Core, row: WebhookRow): string {
  return openSecret(secretKey(core), row.secretCiphertext);
}

function present(row: WebhookRow, secret?: string): Webhook {
  return {
    webhook_id: row.webhookId,
    agent_id: row.agentId,
    url: row.url,
    secret: secret ?? `whsec_…${row.secretLastFour}`,
    signature_header: row.signatureHeader,
    protocol: row.protocol,
    capabilities: row.capabilities as Capability[],
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The agent's webhook row, if it has one. */
export async function findWebhook(db: Executor, agentId: string): Promise<WebhookRow | undefined> {
  const [row] = await db.select().from(webhooks).where(eq(webhooks.agentId, agentId));
  return row;
}

/**
 * Creates the agent's webhook, or replaces the one it has (an agent has one). A replacement
 * keeps its secret unless a new one is given or `rotate_secret` asks for one, so a receiver's
 * verification never breaks by surprise; `secret_changed` says which happened. The secret is
 * shown in full only in the answer that set it.
 */
export async function setWebhook(core: Core, accountId: string, input: SetWebhookBody): Promise<{ webhook: SetWebhookResult; created: boolean }> {
  const problem = webhookUrlProblem(input.url, core.config.allowPrivateWebhooks);
  if (problem) throw new AppError("validation_error", `The webhook url ${problem}.`, { errors: [{ field: "url", message: problem }] });
  await loadAgent(core.db, accountId, input.agent_id);
  const existing = await findWebhook(core.db, input.agent_id);
  const kept = existing && input.secret === undefined && !input.rotate_secret ? webhookSecret(core, existing) : undefined;
  const secret = kept ?? input.secret ?? `whsec_${randomBytes(24).toString("base64")}`;
  const changed = !existing || (kept === undefined && secret !== webhookSecret(core, existing));
  const now = core.now();
  const values = {
    url: input.url,
    ...(changed ? { secretCiphertext: sealSecret(secretKey(core), secret), secretLastFour: secret.slice(-4) } : {}),
    signatureHeader: input.signature_header,
    protocol: input.protocol,
    capabilities: input.capabilities,
    updatedAt: now,
  };
  const [row] = await core.db
    .insert(webhooks)
    .values({
      webhookId: newId("wh"),
      accountId,
      agentId: input.agent_id,
      createdAt: now,
      secretCiphertext: sealSecret(secretKey(core), secret),
      secretLastFour: secret.slice(-4),
      ...values,
    })
    .onConflictDoUpdate({ target: webhooks.agentId, set: values })
    .returning();
  return { webhook: { ...present(row!, changed ? secret : undefined), secret_changed: changed }, created: !existing };
}

/** The agent's webhook, secret masked, or undefined when it has none. */
export async function getWebhook(core: Core, accountId: string, agentId: string): Promise<Webhook | undefined> {
  await loadAgent(core.db, accountId, agentId);
  const row = await findWebhook(core.db, agentId);
  return row ? present(row) : undefined;
}

/** The account's webhooks, secrets masked; narrowed to one agent with agent_id. */
export async function listWebhooks(core: Core, accountId: string, query: Pagination & { agent_id?: string | undefined }) {
  if (query.agent_id) await loadAgent(core.db, accountId, query.agent_id);
  const rows = await core.db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.accountId, accountId), query.agent_id ? eq(webhooks.agentId, query.agent_id) : undefined))
    .orderBy(desc(webhooks.webhookId))
    .limit(query.limit + 1)
    .offset(query.offset);
  return toPage(rows, query, (row) => present(row));
}

function noWebhook(agentId: string): AppError {
  return new AppError("not_found", `Agent ${agentId} has no webhook. Create one with POST /v1/webhooks first.`);
}

/** Removes the agent's webhook; later events wait in the mailbox (or go to the relay). */
export async function deleteWebhook(core: Core, accountId: string, agentId: string) {
  await loadAgent(core.db, accountId, agentId);
  const [row] = await core.db.delete(webhooks).where(eq(webhooks.agentId, agentId)).returning({ webhookId: webhooks.webhookId });
  if (!row) throw noWebhook(agentId);
  return { agent_id: agentId, deleted: true as const };
}

/**
 * Sends a signed `webhook.test` through the real pipeline (the job queue, the workers, the
 * retries) and waits for the first attempt, so the caller sees at once whether it worked.
 */
export async function testWebhook(core: Core, accountId: string, agentId: string) {
  await loadAgent(core.db, accountId, agentId);
  // To the webhook even when a relay socket is open: this tests the webhook.
  const event = await core.db.transaction(async (tx) => {
    const webhook = await findWebhook(tx, agentId);
    if (!webhook) throw noWebhook(agentId);
    const payload = { message: "This is a test delivery from agentline." };
    return recordEvent(core, tx, { accountId, agentId, type: "webhook.test", payload, target: { route: "webhook", webhook } });
  });
  const deadline = Date.now() + core.config.webhookTimeoutMs + 2_000;
  // Waiting for the receiver is the point of this request: its deadline moves out by as much.
  extendCurrentDeadline(core.config.webhookTimeoutMs + 2_000);
  for (;;) {
    // By agent too, so the (agent_id, attempt_id) index serves it.
    const [attempt] = await core.db
      .select()
      .from(webhookAttempts)
      .where(and(eq(webhookAttempts.agentId, agentId), eq(webhookAttempts.messageId, event.event_id)))
      .limit(1);
    if (attempt && attempt.error !== IN_FLIGHT) {
      const delivered = isDelivered(attempt.statusCode);
      return { event_id: event.event_id, delivered, status_code: attempt.statusCode, latency_ms: attempt.latencyMs, error: attempt.error };
    }
    if (Date.now() > deadline)
      return { event_id: event.event_id, delivered: false, status_code: null, latency_ms: null, error: "no attempt yet; see GET /v1/webhooks/deliveries" };
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every attempt at delivering to the agent's webhook, newest first. */
export async function listDeliveryAttempts(core: Core, accountId: string, query: Pagination & { agent_id: string }) {
  await loadAgent(core.db, accountId, query.agent_id);
  const rows = await core.db
    .select()
    .from(webhookAttempts)
    .where(eq(webhookAttempts.agentId, query.agent_id))
    .orderBy(desc(webhookAttempts.attemptId))
    .limit(query.limit + 1)
    .offset(query.offset);
  return toPage(rows, query, (r) => ({
    attempt_id: r.attemptId,
    delivery_id: r.deliveryId,
    message_id: r.messageId,
    message_type: r.messageType,
    url: r.url,
    attempt: r.attempt,
    status_code: r.statusCode,
    latency_ms: r.latencyMs,
    error: r.error,
    outcome: isDelivered(r.statusCode) ? ("succeeded" as const) : ("failed" as const),
    created_at: r.createdAt.toISOString(),
  }));
}
