import { expect } from "vitest";
import type { Api } from "../../harness/api.js";
import type { ReceivedRequest } from "./receiver.js";
import { Softphone } from "./softphone.js";
import { agentWithNumber } from "./telephony.js";

/** The type of a protocol-2 message a receiver got, from its X-Service-Event header. */
export const messageType = (r: ReceivedRequest) => String(r.headers["x-service-event"]);

/**
 * A new agent on a protocol-2 webhook at `url` with the given capabilities, an outbound call to
 * it that answered at once, and its softphone.
 */
export async function protocol2Call(api: Api, url: string, capabilities: string[], agent: Record<string, unknown> = {}) {
  const { agentId, phoneNumber } = await agentWithNumber(api, agent);
  const hook = await api.post("/v1/webhooks", { agent_id: agentId, url, protocol: "service-relay/2", capabilities });
  expect(hook.status).toBe(201);
  const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
  const phone = await Softphone.connect(api.baseUrl, call.body.call_id, api.key!);
  return { agentId, phoneNumber, callId: call.body.call_id as string, phone };
}

/** Answers a task the way a protocol-2 runtime does: only through the context endpoint. */
export function answerTask(task: any, text: string, extra: Record<string, unknown> = {}) {
  return fetch(task.push_context_url, {
    method: "POST",
    headers: { authorization: `Bearer ${task.push_token}`, "content-type": "application/json" },
    body: JSON.stringify({ text, ...extra }),
  });
}
