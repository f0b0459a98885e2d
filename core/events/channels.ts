/** Announced (ids only) whenever an agent has a new event a relay socket or a waiting poll may want: `{agent_id, account_id}`. */
export const EVENTS_CREATED_CHANNEL = "events.created";

/** Announced when a webhook delivery job is due, so a worker in any process picks it up at once. */
export const WEBHOOKS_DUE_CHANNEL = "webhooks.due";

/** Announced when a relay socket opens: `{agent_id, session_id}`; older sockets of the agent close. */
export const RELAY_SESSION_CHANNEL = "relay.session";
