import { and, desc, eq } from "drizzle-orm";
import { loadAgent } from "../agents/agents.js";
import type { Core } from "../context.js";
import { calls } from "../db/schema/calls.js";
import { type Pagination, toPage } from "../schemas/common.js";
import { loadCall, presentCall, readTranscript } from "./call-records.js";
import type { CALL_STATUSES } from "./schemas.js";

export async function listCalls(
  core: Core,
  accountId: string,
  query: Pagination & { agent_id?: string | undefined; status?: (typeof CALL_STATUSES)[number] | undefined },
) {
  if (query.agent_id) await loadAgent(core.db, accountId, query.agent_id);
  const rows = await core.db
    .select()
    .from(calls)
    .where(
      and(
        eq(calls.accountId, accountId),
        query.agent_id ? eq(calls.agentId, query.agent_id) : undefined,
        query.status ? eq(calls.status, query.status) : undefined,
      ),
    )
    .orderBy(desc(calls.callId))
    .limit(query.limit + 1)
    .offset(query.offset);
  return toPage(rows, query, presentCall);
}

export async function getCall(core: Core, accountId: string, callId: string) {
  return presentCall(await loadCall(core.db, accountId, callId));
}

export async function getTranscript(core: Core, accountId: string, callId: string) {
  await loadCall(core.db, accountId, callId);
  return readTranscript(core.db, callId);
}
