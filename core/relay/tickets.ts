import { and, eq, gt, lt } from "drizzle-orm";
import { z } from "zod";
import { loadAgent } from "../agents/agents.js";
import { hashToken, randomToken } from "../auth/tokens.js";
import type { Core } from "../context.js";
import { relayTickets } from "../db/schema/relay-tickets.js";
import { AppError } from "../errors.js";

/** How long a relay ticket stays good: long enough to open a socket, too short to be worth stealing. */
export const RELAY_TICKET_TTL_SECONDS = 60;

export const RelayTicketBody = z
  .strictObject({
    agent_id: z.string().min(1).meta({ description: "The agent whose relay the ticket opens (agt_...)" }),
  })
  .meta({ id: "RelayTicketRequest" });
export type RelayTicketBody = z.infer<typeof RelayTicketBody>;

export const RelayTicket = z
  .object({
    ticket: z.string().meta({ description: "rt_...: pass it as ?ticket= on the relay URL; good once" }),
    agent_id: z.string(),
    expires_in: z.number().int().meta({ description: "Seconds the ticket stays good" }),
    expires_at: z.iso.datetime(),
    url: z.string().meta({ description: "The relay URL with agent_id and ticket filled in: open it with any WebSocket client" }),
  })
  .meta({ id: "RelayTicket" });
export type RelayTicket = z.infer<typeof RelayTicket>;

/** The relay's WebSocket URL for a public base URL: http becomes ws, https wss. */
export function relayUrl(baseUrl: string, query: Record<string, string>): string {
  return `${baseUrl.replace(/^http/, "ws")}/v1/events/ws?${new URLSearchParams(query)}`;
}

/**
 * Issues a single-use ticket that opens one agent's relay for the account, for clients that
 * cannot set an Authorization header on a WebSocket upgrade (browsers, Deno, Node's built-in
 * WebSocket). Only its hash is stored; expired tickets are swept as new ones are issued. It
 * records the key that minted it: revoking the key deletes its tickets.
 */
export async function issueRelayTicket(core: Core, minter: TicketHolder, input: RelayTicketBody, baseUrl: string): Promise<RelayTicket> {
  const { accountId, credentialId } = minter;
  await loadAgent(core.db, accountId, input.agent_id);
  const ticket = randomToken("rt_");
  const now = core.now();
  const expiresAt = new Date(now.getTime() + RELAY_TICKET_TTL_SECONDS * 1000);
  await core.db.transaction(async (tx) => {
    await tx.delete(relayTickets).where(lt(relayTickets.expiresAt, now));
    await tx.insert(relayTickets).values({ ticketHash: hashToken(ticket), accountId, credentialId, agentId: input.agent_id, expiresAt, createdAt: now });
  });
  return {
    ticket,
    agent_id: input.agent_id,
    expires_in: RELAY_TICKET_TTL_SECONDS,
    expires_at: expiresAt.toISOString(),
    url: relayUrl(baseUrl, { agent_id: input.agent_id, ticket }),
  };
}

/** The account a ticket opens a relay for, and the credential that minted it (watched while the socket is open). */
export interface TicketHolder {
  accountId: string;
  credentialId: string;
}

/**
 * Redeems a ticket for the relay of `agentId`: the account it was issued to, and the key that
 * minted it. The row is deleted as it is read, so a ticket opens one socket, in whichever process
 * it is presented.
 */
export async function redeemRelayTicket(core: Core, ticket: string, agentId: string | null): Promise<TicketHolder> {
  const [row] = await core.db
    .delete(relayTickets)
    .where(and(eq(relayTickets.ticketHash, hashToken(ticket)), gt(relayTickets.expiresAt, core.now())))
    .returning({ accountId: relayTickets.accountId, credentialId: relayTickets.credentialId, agentId: relayTickets.agentId });
  if (!row)
    throw new AppError(
      "unauthorized",
      "The relay ticket is unknown, expired or already used (or the key that minted it was revoked); get a new one with POST /v1/events/ws/ticket.",
    );
  if (agentId !== null && row.agentId !== agentId) throw new AppError("unauthorized", `The relay ticket was issued for agent ${row.agentId}, not ${agentId}.`);
  return { accountId: row.accountId, credentialId: row.credentialId };
}
