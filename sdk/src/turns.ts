import { AgentlineError } from "./errors.js";
import type { CallUtteranceEvent } from "./events.js";

/** How a push of context ended: spoken, or discarded because the turn or the call moved on. */
export type PushOutcome = { status: "spoken" } | { status: "discarded"; code: string; httpStatus: 409 | 410 };

/**
 * One caller turn to answer. `signal` aborts when the answer is no longer wanted: the caller
 * spoke again (a newer turn of the same call arrived) or the service discarded a push (409/410).
 */
export interface Turn {
  event: CallUtteranceEvent;
  callId: string;
  turnId: string;
  /** What the caller said (or the DTMF digits). */
  text: string;
  input: "speech" | "dtmf";
  fromNumber: string;
  toNumber: string;
  isOwnerCall: boolean;
  /** The call so far, this utterance last. */
  conversation: CallUtteranceEvent["conversation"];
  sessionKey: string;
  signal: AbortSignal;
  /** Speaks an interim line ("Let me check.") and keeps the turn open. */
  interim(text: string): Promise<PushOutcome>;
  /**
   * Answers the turn by handing the call to a person (`transfer_to`): cold by default (the agent
   * leaves the call), or warm with a `whisper` for the person. `text`, if given, is spoken first.
   * A warm transfer that finds nobody comes back as a new turn whose text is `[transfer failed: <reason>]`.
   */
  transfer(toNumber: string, options?: TransferOptions): Promise<PushOutcome>;
}

/** How a turn hands its call to a person (Turn.transfer, or a `{ transferTo }` answer). */
export interface TransferOptions {
  mode?: "cold" | "warm";
  /** Warm only: what the person hears before the caller is bridged. */
  whisper?: string;
  /** Spoken to the caller first ("Putting you through."). */
  text?: string;
}

/**
 * What a turn handler returns: the final answer as text, `{text, endCall}` to hang up after it,
 * nothing to stay silent, or an async iterable of lines: each but the last is spoken as an interim
 * line as soon as it is yielded, the last is the final answer (stream an LLM sentence by sentence).
 */
export type TurnAnswer =
  | string
  | { text: string; endCall?: boolean }
  | ({ transferTo: string } & TransferOptions)
  | AsyncIterable<string>
  | null
  | undefined
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing (void) stays silent.
  | void;
export type TurnHandler = (turn: Turn) => TurnAnswer | Promise<TurnAnswer>;

export interface TurnOptions {
  fetch?: typeof fetch;
  /** Told when the service discarded the answer (409 stale/cancelled/answered, 410 call ended). */
  onDiscard?: (turn: Turn, outcome: Extract<PushOutcome, { status: "discarded" }>) => void;
}

const RETRY_DELAYS_MS = [100, 400, 1_000];

/** What one push sends: a line, or a transfer (with an optional line before it). */
type PushBody =
  | { text: string; final: boolean; end_call?: boolean }
  | { text?: string; transfer_to: string; transfer_mode?: "cold" | "warm"; whisper?: string };

/** Pushes one line to the turn's push URL with its push token; 409/410 are outcomes, not errors. */
async function push(event: CallUtteranceEvent, body: PushBody, fetchImpl: typeof fetch): Promise<PushOutcome> {
  for (let attempt = 0; ; attempt++) {
    let response: Response | undefined;
    try {
      response = await fetchImpl(event.push_context_url, {
        method: "POST",
        headers: { authorization: `Bearer ${event.push_token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    } catch (error) {
      if (attempt >= RETRY_DELAYS_MS.length) throw error;
    }
    if (response) {
      const text = await response.text();
      if (response.ok) return { status: "spoken" };
      const problem = text ? safeJson(text) : undefined;
      if (response.status === 409 || response.status === 410) {
        return { status: "discarded", code: String((problem as { code?: string })?.code ?? response.status), httpStatus: response.status };
      }
      // A busy or briefly unavailable service is worth a quick retry; anything else is a bug to report.
      if ((response.status !== 429 && response.status < 500) || attempt >= RETRY_DELAYS_MS.length) throw AgentlineError.from(response, problem ?? text);
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt]));
  }
}

function transferBody(toNumber: string, options: TransferOptions): PushBody {
  return {
    transfer_to: toNumber,
    ...(options.mode ? { transfer_mode: options.mode } : {}),
    ...(options.whisper !== undefined ? { whisper: options.whisper } : {}),
    ...(options.text !== undefined ? { text: options.text } : {}),
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Answers one `call.utterance` with the handler: for webhooks and the mailbox as well as the
 * relay. Resolves with how the final answer ended (or undefined when the handler stayed silent).
 */
export async function answerTurn(
  event: CallUtteranceEvent,
  handler: TurnHandler,
  options: TurnOptions & { signal?: AbortSignal } = {},
): Promise<PushOutcome | undefined> {
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  const controller = new AbortController();
  options.signal?.addEventListener("abort", () => controller.abort(options.signal?.reason), { once: true });
  let discarded: Extract<PushOutcome, { status: "discarded" }> | undefined;
  const turn: Turn = {
    event,
    callId: event.call_id,
    turnId: event.turn_id,
    text: event.payload.text,
    input: event.payload.input,
    fromNumber: event.payload.from_number,
    toNumber: event.payload.to_number,
    isOwnerCall: event.payload.is_owner_call,
    conversation: event.conversation,
    sessionKey: event.session_key,
    signal: controller.signal,
    interim: (text) => send({ text, final: false }),
    transfer: (toNumber, transfer = {}) => send(transferBody(toNumber, transfer)),
  };
  async function send(body: PushBody): Promise<PushOutcome> {
    if (discarded) return discarded;
    const outcome = await push(event, body, fetchImpl);
    if (outcome.status === "discarded") {
      discarded = outcome;
      controller.abort(outcome);
      options.onDiscard?.(turn, outcome);
    }
    return outcome;
  }

  try {
    const answer = await handler(turn);
    if (answer === undefined || answer === null) return undefined;
    if (typeof answer === "string") return await send({ text: answer, final: true });
    if (Symbol.asyncIterator in answer) {
      let previous: string | undefined;
      for await (const line of answer) {
        if (previous !== undefined && (await send({ text: previous, final: false })).status === "discarded") return discarded;
        previous = line;
      }
      return previous === undefined ? undefined : await send({ text: previous, final: true });
    }
    if ("transferTo" in answer) return await send(transferBody(answer.transferTo, answer));
    return await send({ text: answer.text, final: true, end_call: answer.endCall ?? false });
  } catch (error) {
    // Work cut short because the turn was superseded or discarded (an aborted LLM request) is no failure.
    if (controller.signal.aborted) return discarded;
    throw error;
  }
}

/**
 * Relay handlers that answer every caller turn with `handler`:
 * `agentline.relay(agentId, { ...onTurn(async (turn) => "Hello!") })`. A newer turn of the same
 * call aborts the older one's `signal`; answers the service discards (409/410) are dropped.
 */
export function onTurn(handler: TurnHandler, options: TurnOptions = {}) {
  const current = new Map<string, AbortController>();
  return {
    "call.utterance": async (event: CallUtteranceEvent): Promise<PushOutcome | undefined> => {
      current.get(event.call_id)?.abort(new Error("superseded by a newer turn"));
      const mine = new AbortController();
      current.set(event.call_id, mine);
      try {
        return await answerTurn(event, handler, { ...options, signal: mine.signal });
      } finally {
        if (current.get(event.call_id) === mine) current.delete(event.call_id);
      }
    },
  };
}
