import createClient, { type Client } from "openapi-fetch";
import { resolveConnection } from "./credentials.js";
import { AgentlineError } from "./errors.js";
import type { paths } from "./generated/openapi.js";
import { type RelayConnection, type RelayHandlers, type RelayOptions, relay } from "./relay.js";

export interface AgentlineOptions {
  /** Default: AGENTLINE_BASE_URL, the `agentline login` file, else http://127.0.0.1:8080. */
  baseUrl?: string;
  /** An API key (`sk_...`). Default: AGENTLINE_API_KEY, else the key `agentline login` saved. */
  apiKey?: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

/** The typed REST client: every operation of /openapi.json, by path and method. */
export type AgentlineApi = Client<paths>;

/**
 * The result of an API call, or an AgentlineError for a problem answer:
 * `const agent = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Front desk" } }))`.
 */
export function unwrap<R extends { data?: unknown; error?: unknown; response: Response }>(result: R): NonNullable<R["data"]> {
  if (result.error !== undefined || !result.response.ok) throw AgentlineError.from(result.response, result.error);
  return result.data as NonNullable<R["data"]>;
}

/**
 * The agentline client. `api` is generated from the service's OpenAPI document (openapi-fetch
 * over openapi-typescript types); `relay` holds an agent's event stream.
 */
export class Agentline {
  readonly baseUrl: string;
  readonly api: AgentlineApi;
  private readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(options: AgentlineOptions = {}) {
    const { baseUrl, apiKey } = resolveConnection(options);
    this.baseUrl = baseUrl;
    this.apiKey = apiKey;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.api = createClient<paths>({ baseUrl, fetch: (request: Request) => this.fetchImpl(request) });
    this.api.use({
      onRequest: ({ request }) => {
        if (this.apiKey && !request.headers.has("authorization")) request.headers.set("authorization", `Bearer ${this.apiKey}`);
        return request;
      },
      onResponse: ({ response }) => {
        if (response.status === 401 && !this.apiKey) {
          // Say how to get a key rather than leaving a bare 401.
          return new Response(
            JSON.stringify({ code: "unauthorized", detail: "No API key: run `npx agentline login`, set AGENTLINE_API_KEY, or pass { apiKey }." }),
            { status: 401, headers: { "content-type": "application/problem+json" } },
          );
        }
        return response;
      },
    });
  }

  /**
   * Texts `toNumber` from the agent's number (`fromNumber`: another of its numbers). Resolves to
   * the text as queued (`segments` says how many were charged); `sms.status` events say whether it
   * was delivered. A recipient who texted STOP rejects with AgentlineError `recipient_opted_out`.
   */
  async sendText(agentId: string, toNumber: string, text: string, options: { fromNumber?: string } = {}) {
    const body = { agent_id: agentId, to_number: toNumber, text, ...(options.fromNumber ? { from_number: options.fromNumber } : {}) };
    return unwrap(await this.api.POST("/v1/messages", { body }));
  }

  /** A single-use relay ticket (60 s) for the agent, with the URL it opens. */
  async relayTicket(agentId: string) {
    return unwrap(await this.api.POST("/v1/events/ws/ticket", { body: { agent_id: agentId } }));
  }

  /**
   * Holds the agent's relay: connects with a fresh ticket each time, acknowledges each event once
   * its handler settles, reconnects with backoff and jitter, and never hands an event twice.
   */
  relay(agentId: string, handlers: RelayHandlers, options: RelayOptions = {}): RelayConnection {
    return relay(agentId, handlers, { ...options, url: options.url ?? (async () => (await this.relayTicket(agentId)).url) });
  }

  /**
   * Says a line on a live call without a caller turn to answer ("Are you still there?"); with
   * `endCall`, hangs up after it. Throws an AgentlineError: 409 `turn_open` while a turn waits for
   * its answer (answer the turn instead), 410 `call_ended`.
   */
  async say(callId: string, text: string, options: { endCall?: boolean } = {}) {
    return unwrap(
      await this.api.POST("/v1/calls/{call_id}/say", { params: { path: { call_id: callId } }, body: { text, end_call: options.endCall ?? false } }),
    );
  }

  /** Presses keys on a live call, for a phone menu: `0-9`, `*`, `#`, and `w` for a half-second pause (at most 32). */
  async sendDigits(callId: string, digits: string) {
    return unwrap(await this.api.POST("/v1/calls/{call_id}/digits", { params: { path: { call_id: callId } }, body: { digits } }));
  }
}
