// @agentline/sdk: the typed REST client, the relay client, live-turn answers, webhook checks.
export { Agentline, type AgentlineApi, type AgentlineOptions, unwrap } from "./client.js";
export {
  type Connection,
  credentialsPath,
  DEFAULT_BASE_URL,
  readCredentials,
  resolveConnection,
  type SavedCredentials,
  writeCredentials,
} from "./credentials.js";
export { AgentlineError, WebhookVerificationError } from "./errors.js";
export { type AgentlineEvent, type CallUtteranceEvent, type EventPayloads, type EventType, SeenEvents, type TurnFields } from "./events.js";
export type { components, operations, paths } from "./generated/openapi.js";
export {
  type RelayConnection,
  RelayGaveUp,
  type RelayHandlers,
  type RelayOptions,
  type RelayStatus,
  relay,
  type SocketConstructor,
  type SocketLike,
} from "./relay.js";
export { answerTurn, onTurn, type PushOutcome, type TransferOptions, type Turn, type TurnAnswer, type TurnHandler, type TurnOptions } from "./turns.js";
export { type HeadersLike, type VerifyOptions, verifyWebhook } from "./webhooks.js";
