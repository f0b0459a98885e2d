// @agentline/sdk: the typed REST client, the relay client, live-turn answers, webhook checks.
export { Agentline, unwrap, type AgentlineApi, type AgentlineOptions } from "./client.js";
export { credentialsPath, DEFAULT_BASE_URL, readCredentials, resolveConnection, writeCredentials, type Connection, type SavedCredentials } from "./credentials.js";
export { AgentlineError, WebhookVerificationError } from "./errors.js";
export { SeenEvents, type AgentlineEvent, type CallUtteranceEvent, type EventPayloads, type EventType, type TurnFields } from "./events.js";
export { relay, RelayGaveUp, type RelayConnection, type RelayHandlers, type RelayOptions, type RelayStatus, type SocketConstructor, type SocketLike } from "./relay.js";
export { answerTurn, onTurn, type PushOutcome, type Turn, type TurnAnswer, type TurnHandler, type TurnOptions } from "./turns.js";
export { verifyWebhook, type HeadersLike, type VerifyOptions } from "./webhooks.js";
export type { components, operations, paths } from "./generated/openapi.js";
