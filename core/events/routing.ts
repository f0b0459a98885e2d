import { and, eq, gt } from "drizzle-orm";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { agents } from "../db/schema/agents.js";
import { relaySessions } from "../db/schema/relay-sessions.js";
import type { WebhookRow } from "../db/schema/webhooks.js";
import { webhooks } from "../db/schema/webhooks.js";
import { newId } from "../ids.js";
import { enqueueDelivery } from "../webhooks/deliveries.js";
import type { Capability } from "../webhooks/schemas.js";

/** A relay holder refreshes its row more often than this; an older row is a dead process's. */
export const RELAY_LIVENESS_MS = 60_000;

/** The oldest a relay session's last sighting may be, at `now`, for the socket to count as alive. */
export function relayLiveSince(now: Date): Date {
  return new Date(now.getTime() - RELAY_LIVENESS_MS);
}

/** Where an agent's next event goes: its relay socket, else its webhook, else the mailbox. */
export type DeliveryTarget = { route: "relay" } | { route: "mailbox" } | { route: "webhook"; webhook: WebhookRow };

/**
 * Where the agent's next event goes. The live turn's database functions (core/db/functions/)
 * follow the same rule in their own joins, to stay one round trip; a change here is a change there.
 */
export async function deliveryTarget(tx: Executor, agentId: string, now: Date): Promise<DeliveryTarget> {
  // One round trip: it runs on every event, live turns included.
  const [row] = await tx
    .select({ relay: relaySessions.agentId, webhook: webhooks })
    .from(agents)
    .leftJoin(relaySessions, and(eq(relaySessions.agentId, agents.agentId), gt(relaySessions.lastSeenAt, relayLiveSince(now))))
    .leftJoin(webhooks, eq(webhooks.agentId, agents.agentId))
    .where(eq(agents.agentId, agentId));
  if (row?.relay) return { route: "relay" };
  return row?.webhook ? { route: "webhook", webhook: row.webhook } : { route: "mailbox" };
}

/** The protocol-2 webhook of a target, with its capabilities, or null when it does not speak protocol 2. */
export function protocol2(target: DeliveryTarget): { webhook: WebhookRow; has(capability: Capability): boolean } | null {
  if (target.route !== "webhook" || target.webhook.protocol !== "service-relay/2") return null;
  const capabilities = target.webhook.capabilities as Capability[];
  return { webhook: target.webhook, has: (capability) => capabilities.includes(capability) };
}

/** A protocol-2 message: its type (the X-Service-Event header) and its body. */
export interface SessionMessage {
  type: string;
  body: Record<string, unknown>;
}

/**
 * Sends a protocol-2 message that has no public event behind it (a session start for an
 * outbound call, a task amend or cancel), when the agent's events go to a protocol-2 webhook.
 * Returns whether it was queued.
 */
export async function recordSessionMessage(
  core: Core,
  tx: Executor,
  target: DeliveryTarget,
  message: { accountId: string; agentId: string; build(messageId: string): SessionMessage | Promise<SessionMessage>; liveTurnId?: string | undefined },
): Promise<boolean> {
  const p2 = protocol2(target);
  if (!p2) return false;
  const messageId = newId("evt");
  const { type, body } = await message.build(messageId);
  await enqueueDelivery(core, tx, {
    accountId: message.accountId,
    agentId: message.agentId,
    webhookId: p2.webhook.webhookId,
    eventSeq: null,
    messageId,
    messageType: type,
    body,
    liveTurnId: message.liveTurnId,
  });
  return true;
}
