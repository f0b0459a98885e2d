import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AppError, ERROR_CODES, type ErrorCode, quoted } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { MAX_LISTED_ERRORS } from "../core/schemas/validation.js";

/** Where a tool call happened: what a next step may point at. */
export interface ToolPlace {
  accountId: string;
  /** The service's public address; empty when it serves no HTTP (a local stdio install). */
  baseUrl: string;
}

/** Adding money, the ways open to this place: the top-up URL in full when the service serves HTTP, the operator's command when not. */
function topUp(_error: AppError, tool: string, place?: ToolPlace): string {
  const first = `Add money, then call ${tool} again: get_balance shows the balance and the prices.`;
  if (place?.baseUrl)
    return (
      `${first} To top up, the account's owner (or a wallet) pays ${place.baseUrl}/v1/billing/topup/x402/pay?amount=5 over HTTP with x402 or MPP ` +
      "(an account can also pay it with its API key); the balance is usable at once. You cannot top up through these tools: ask your user."
    );
  return (
    `${first} This service runs locally with no HTTP address, so its operator adds money with the command ` +
    `\`agentline admin credit --account ${place?.accountId ?? "<acct_id>"} --amount 5 --note "top-up"\` on this server's database ` +
    "(an embedded one, DATA_DIR, once this MCP server has stopped). You cannot top up through these tools: ask your user."
  );
}

const NEXT_UTTERANCE = 'wait_for_event with the call_id and event_types ["call.utterance"] returns the caller\'s newest turn; answer its turn_id.';
const TRY_LATER = "Try again in a few seconds; if it keeps failing, report it with send_feedback, quoting the request id.";

/** What to do next after each error, in the words a model acts on. Every code has one. */
const NEXT_STEPS: Record<ErrorCode, string | ((error: AppError, tool: string, place?: ToolPlace) => string)> = {
  validation_error: (_e, tool) => `Correct the fields listed and call ${tool} again; its inputSchema (tools/list) says what each field takes.`,
  malformed_json: "Send the arguments as a JSON object.",
  bad_request: (_e, tool) => `Change the request as the message says and call ${tool} again.`,
  invalid_otp: "Request a new code and try again.",
  // The AgentID sign-in happens before MCP (it yields the key MCP connects with); these never reach a tool.
  authorization_pending: "Finish the sign-in in the browser, then poll again after `interval` seconds.",
  slow_down: "Poll less often: wait the `interval` the answer gives.",
  access_denied: "The sign-in was refused; start a new one, or sign in with an e-mail code.",
  expired_token: "The sign-in expired; start a new one.",
  sign_in_failed: "Start a new sign-in; if it keeps failing, sign in with an e-mail code.",
  no_active_number: "Give the agent a number first (buy_number with its agent_id, or reassign_number), then place the call again.",
  unauthorized: "This connection's API key or agent_token is not accepted; configure a valid one and reconnect.",
  insufficient_balance: topUp,
  payment_required: topUp,
  forbidden: "This credential may not do that; use the account's API key, or connect again without the limit the message names.",
  insufficient_scope: "Connect again, allowing the scope the message names (an OAuth client does this on its own from the 403's WWW-Authenticate).",
  not_found: (error) =>
    // A turn's id comes from an event, not from a list: the general hint sent models looking in the wrong place.
    /^No turn with id /.test(error.detail)
      ? `Check the turn_id: it is the turn_id of the call.utterance being answered, exactly (wait_for_event returns it). ${NEXT_UTTERANCE}`
      : "Check the id: list_agents, list_numbers and list_calls show the ids this account owns (another account's ids are never visible here).",
  method_not_allowed: TRY_LATER,
  not_acceptable: "Send Accept: application/json, text/event-stream on every request to the MCP endpoint.",
  origin_not_allowed: "Connect from a local client or this service's own pages; a browser page on another site may not use this server.",
  conflict: "Read the resource's current state (its get_ tool) and decide again.",
  cannot_revoke_current_key: "Revoke it with another key or token of the account (an agent token can rotate itself).",
  no_numbers_available: "Call buy_number again with another area_code, or without one.",
  number_unavailable: "The carrier no longer has that number: buy_number gets another, or release_number drops the one that is gone.",
  number_in_use: "Choose another number: this one is already on the service or was released from it.",
  number_released: "A released number is gone for good; buy_number gets a new one.",
  number_not_in_service: "Use a number an agent answers: list_numbers shows them, reassign_number gives one an agent.",
  recipient_opted_out: "Do not text this number again: its owner texted STOP to the sending number. If they text START, send_text works again.",
  call_not_in_progress: "get_call shows the call's status: only a connected (in-progress) call takes turns.",
  turn_abandoned: `Discard this answer: its turn was given up. ${NEXT_UTTERANCE}`,
  turn_answered: `Nothing more to say for this turn: it already has its final answer. ${NEXT_UTTERANCE}`,
  idempotency_conflict: "Use a new idempotency key for a different request.",
  turn_stale: `Discard this answer: the caller has spoken again since. ${NEXT_UTTERANCE}`,
  turn_cancelled: `Discard this answer: the caller interrupted it. ${NEXT_UTTERANCE}`,
  turn_open: "A caller turn is waiting for its answer: answer it with push_context (its turn_id is in the error) instead of say_on_call.",
  transfer_in_progress:
    "The call is with (or being dialled to) a person: wait for call.transfer.answered or call.transfer.failed (a failed warm transfer gives the call back with a new turn).",
  call_ended:
    'Stop working on this call. get_transcript shows what was said; wait_for_event with event_types ["call.completed"] gives how it ended and what it cost.',
  gone: "It no longer exists; list again for what does.",
  payload_too_large: "Send less: shorten the text or the metadata.",
  unsupported_media_type: "Send the arguments as a JSON object.",
  rate_limited: (error) => `Wait ${String(error.extra.retry_after ?? error.headers["Retry-After"] ?? "a few")} seconds, then try again.`,
  limit_reached: (error) =>
    `This account already holds as many ${String(error.extra.limit ?? "of these")} as it may at once (${String(error.extra.max ?? "")}): finish or close one, then try again.`,
  internal_error: TRY_LATER,
  carrier_unavailable: "The telephone carrier did not answer; nothing was charged or changed. Try the same call again in a minute.",
  service_unavailable: TRY_LATER,
};

/**
 * A failed tool call as the model sees it: `isError: true` and text saying what went wrong, each
 * bad field, and what to do next. Never a protocol error: the model can act on a result.
 */
export function toolError(error: unknown, tool: string, logger: Logger, requestId: string, place?: ToolPlace): CallToolResult {
  const known = error instanceof AppError ? error : null;
  if (!known) logger.error({ err: error, tool, request_id: requestId }, "tool failed");
  const failure = known ?? new AppError("internal_error", `Something failed on our side (request id ${requestId}).`);
  const lines = [`${failure.code} (${ERROR_CODES[failure.code].title}): ${inToolWords(failure.detail)}`];
  // Errors list at most MAX_LISTED_ERRORS fields, their names cut short (validationFailed); a
  // list built elsewhere is held to the same.
  for (const field of (failure.errors ?? []).slice(0, MAX_LISTED_ERRORS)) lines.push(`- ${quoted(field.field)}: ${inToolWords(field.message)}`);
  if (Object.keys(failure.extra).length > 0) lines.push(`Details: ${JSON.stringify(failure.extra)}`);
  const next = NEXT_STEPS[failure.code];
  lines.push(`Next step: ${typeof next === "function" ? next(failure, tool, place) : next}`);
  return { isError: true, content: [{ type: "text", text: lines.join("\n") }] };
}

/** A tool call's answer once the connection's credential has been revoked: nothing more is done with it. */
export function revokedCredential(): AppError {
  return new AppError(
    "unauthorized",
    "The API key or agent_token of this connection was revoked (for an OAuth client: its connection was ended); nothing more is done or answered with it.",
  );
}

/**
 * Core's messages and schema descriptions name REST routes ("POST /v1/numbers"); through MCP the
 * same thing is a tool. One table, for tool errors and for tools/list's descriptions alike; REST
 * keeps its own words.
 */
const ROUTES_AS_TOOLS: ReadonlyArray<[RegExp, string]> = [
  [/POST \/v1\/calls\/([\w{}]+)\/context\?turn_id=([\w{}]+)/g, "push_context (call_id $1, turn_id $2)"],
  [/POST \/v1\/calls\/\{call_id\}\/transfer/g, "transfer_call"],
  [/POST \/v1\/calls\/\{call_id\}\/say/g, "say_on_call"],
  [/GET \/v1\/calls\/\{call_id\}\/recording/g, "the recording_url of call.recording.ready"],
  [/POST \/v1\/(?:x402\/)?numbers(?:\/buy)?\b/g, "buy_number"],
  [/POST \/v1\/webhooks\/test\b/g, "test_webhook"],
  [/POST \/v1\/webhooks\b/g, "set_webhook"],
  [/GET \/v1\/voices\b/g, "list_voices"],
  [/PATCH \/v1\/account\/voice\b/g, "set_default_voice"],
  [/ is a 422\b/g, " is refused"],
];

/** A text from core as MCP says it: routes named by their tools. */
export function inToolWords(text: string): string {
  let said = text;
  for (const [route, tool] of ROUTES_AS_TOOLS) said = said.replace(route, tool);
  return said;
}
