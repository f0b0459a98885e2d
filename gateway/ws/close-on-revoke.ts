import type { WebSocket } from "ws";
import { watchCredential } from "../../core/auth/revocation.js";
import type { Core } from "../../core/context.js";

/**
 * Close code of a socket whose credential (the API key, agent token or relay ticket's key that
 * opened it) was revoked: reconnecting with it would be refused.
 */
export const CREDENTIAL_REVOKED = 4401;

/** Closes the socket (4401) when the credential that opened it is revoked, on any process. */
export function closeOnRevoke(core: Core, ws: WebSocket, credentialId: string): void {
  const unwatch = watchCredential(core, credentialId, () => ws.close(CREDENTIAL_REVOKED, "credential revoked"));
  ws.once("close", unwatch);
}
