import { and, count, desc, eq, sql } from "drizzle-orm";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { agents } from "../db/schema/agents.js";
import { limitReached, notFound } from "../errors.js";
import { newId } from "../ids.js";
import { type Page, type Pagination, toPage } from "../schemas/common.js";
import type { Agent, CreateAgentBody, UpdateAgentBody } from "./schemas.js";

type AgentRow = typeof agents.$inferSelect;

/** The API shape of an agent row. */
export function presentAgent(row: AgentRow): Agent {
  return {
    agent_id: row.agentId,
    name: row.name,
    description: row.description,
    owner_number: row.ownerNumber,
    voice_id: row.voiceId,
    greeting: row.greeting,
    metadata: row.metadata,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** The account's agent row, or a 404 for a missing or foreign id. */
export async function loadAgent(db: Executor, accountId: string, agentId: string): Promise<AgentRow> {
  const [row] = await db
    .select()
    .from(agents)
    .where(and(eq(agents.agentId, agentId), eq(agents.accountId, accountId)));
  if (!row) throw notFound("agent", agentId);
  return row;
}

// Any fixed number: the namespace of the per-account advisory lock that agent creations take.
const AGENT_CREATION_LOCK = 7_240_503;

/** Creates an agent, unless the account already has config.limits.accountAgents (429 limit_reached). */
export async function createAgent(core: Core, accountId: string, input: CreateAgentBody): Promise<Agent> {
  const max = core.config.limits.accountAgents;
  const row = await core.db.transaction(async (tx) => {
    // Creations of one account take turns from the count to the commit, so two at the limit
    // cannot both pass. Raw SQL: the query builder has no advisory locks.
    await tx.execute(sql`select pg_advisory_xact_lock(${AGENT_CREATION_LOCK}, hashtext(${accountId}))`);
    const [held] = await tx.select({ agents: count() }).from(agents).where(eq(agents.accountId, accountId));
    if (held!.agents >= max)
      throw limitReached("account_agents", max, `This account already has ${max} agents, its limit (account_agents). Delete one to create another.`);
    const [created] = await tx
      .insert(agents)
      .values({
        agentId: newId("agt"),
        accountId,
        name: input.name,
        description: input.description ?? null,
        ownerNumber: input.owner_number ?? null,
        voiceId: input.voice_id ?? null,
        greeting: input.greeting ?? null,
        metadata: input.metadata ?? {},
      })
      .returning();
    return created!;
  });
  return presentAgent(row);
}

export async function listAgents(core: Core, accountId: string, page: Pagination): Promise<Page<Agent>> {
  const rows = await core.db
    .select()
    .from(agents)
    .where(eq(agents.accountId, accountId))
    .orderBy(desc(agents.agentId))
    .limit(page.limit + 1)
    .offset(page.offset);
  return toPage(rows, page, presentAgent);
}

export async function getAgent(core: Core, accountId: string, agentId: string): Promise<Agent> {
  return presentAgent(await loadAgent(core.db, accountId, agentId));
}

/** Changes only the fields present in input; null clears a nullable field. */
export async function updateAgent(core: Core, accountId: string, agentId: string, input: UpdateAgentBody): Promise<Agent> {
  const changes: Partial<typeof agents.$inferInsert> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.description !== undefined) changes.description = input.description;
  if (input.owner_number !== undefined) changes.ownerNumber = input.owner_number;
  if (input.voice_id !== undefined) changes.voiceId = input.voice_id;
  if (input.greeting !== undefined) changes.greeting = input.greeting;
  if (input.metadata !== undefined) changes.metadata = input.metadata;
  if (Object.keys(changes).length === 0) return getAgent(core, accountId, agentId);
  const [row] = await core.db
    .update(agents)
    .set({ ...changes, updatedAt: core.now() })
    .where(and(eq(agents.agentId, agentId), eq(agents.accountId, accountId)))
    .returning();
  if (!row) throw notFound("agent", agentId);
  return presentAgent(row);
}
