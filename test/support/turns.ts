import { expect } from "vitest";
import type { Api } from "../../harness/api.js";
import { Softphone } from "./softphone.js";
import { agentWithNumber, answeredCall } from "./telephony.js";

/**
 * A live call to a new agent with neither relay socket nor webhook: its turns go to the mailbox.
 * No softphone; the far party speaks through the sandbox API (`sayOnCall`).
 */
export async function mailboxCall(api: Api) {
  const { agentId } = await agentWithNumber(api);
  const callId = await answeredCall(api, agentId);
  return { agentId, callId };
}

/** A live call to a new agent whose events go to a webhook at `url` (protocol 1 unless `hook` says), and its softphone. */
export async function webhookCall(api: Api, url: string, hook: Record<string, unknown> = {}) {
  const { agentId } = await agentWithNumber(api);
  expect((await api.post("/v1/webhooks", { agent_id: agentId, url, ...hook })).status).toBe(201);
  const callId = await answeredCall(api, agentId);
  const phone = await Softphone.connect(api.baseUrl, callId, api.key!);
  return { agentId, callId, phone };
}

/** The far party says a line through the sandbox API; answers the turn it opened. */
export async function sayOnCall(api: Api, callId: string, text: string) {
  return (await api.post(`/v1/sandbox/calls/${callId}/say`, { text })).body.turn_id as string;
}

/** Pushes context to a turn, with the client's key or the key given (an API key or a push token). */
export function pushToTurn(api: Api, callId: string, turnId: string, body: Record<string, unknown>, key?: string) {
  return api.post(`/v1/calls/${callId}/context`, body, { query: { turn_id: turnId }, ...(key ? { key } : {}) });
}

/** The call's transcript as [role, text] pairs. */
export async function transcriptLines(api: Api, callId: string) {
  return (await api.get(`/v1/calls/${callId}/transcript`)).body.map((l: any) => [l.role, l.text]);
}
