import type { IncomingMessage } from "node:http";
import { WebSocketServer, type WebSocket } from "ws";
import { authenticateAgentToken } from "../../core/auth/agent-tokens.js";
import { authenticateApiKey } from "../../core/auth/api-keys.js";
import { loadCall } from "../../core/calls/call-records.js";
import { CALL_STATUS_CHANNEL } from "../../core/calls/call-status.js";
import { MAX_SPOKEN_TEXT, TERMINAL_STATUSES } from "../../core/calls/schemas.js";
import { SANDBOX_SPEECH_CHANNEL, SandboxCarrier } from "../../core/carrier/sandbox-carrier.js";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { farParty } from "../../core/sandbox/far-party.js";
import { bearerToken } from "../http/authenticate.js";
import { UpgradeRefusal, type UpgradeRoute } from "./upgrades.js";

/** What a softphone client may send. */
type ClientFrame = { type: "say"; text: string } | { type: "dtmf"; digits: string } | { type: "interrupt" } | { type: "hangup" };

function parseFrame(data: string): ClientFrame | string {
  let frame: Record<string, unknown>;
  try {
    frame = JSON.parse(data);
  } catch {
    return "frames must be JSON";
  }
  switch (frame?.type) {
    case "say":
      return typeof frame.text === "string" && frame.text.trim() !== "" && frame.text.length <= MAX_SPOKEN_TEXT
        ? { type: "say", text: frame.text.trim() }
        : `say needs text (1 to ${MAX_SPOKEN_TEXT} characters)`;
    case "dtmf":
      return typeof frame.digits === "string" && /^[0-9*#]{1,32}$/.test(frame.digits) ? { type: "dtmf", digits: frame.digits } : "dtmf needs digits (0-9, * and #)";
    case "interrupt":
    case "hangup":
      return { type: frame.type };
    default:
      return "type must be say, dtmf, interrupt or hangup";
  }
}

/** The account of an upgrade request's bearer API key (or, where allowed, agent token), or a 401 refusal. */
export async function upgradeAccount(core: Core, req: IncomingMessage, options: { agentToken?: boolean } = {}): Promise<string> {
  const token = bearerToken(req.headers.authorization);
  const accountId = !token ? null : token.startsWith("at_") && options.agentToken ? await authenticateAgentToken(core, token) : ((await authenticateApiKey(core, token))?.accountId ?? null);
  if (!accountId) {
    throw new UpgradeRefusal("unauthorized", token ? "The API key is invalid or has been revoked." : "Send your API key as 'Authorization: Bearer sk_...' on the upgrade request.", {
      "WWW-Authenticate": 'Bearer realm="agentline"',
    });
  }
  return accountId;
}

/**
 * The sandbox softphone, `/v1/sandbox/calls/{call_id}/ws`: the far party of one of your calls,
 * live. The server sends `{type:"status",status}` now and on every change, and
 * `{type:"speech",text,final,turn_id}` for every line the agent speaks; the client sends `say`,
 * `dtmf`, `interrupt` and `hangup`. The socket closes (1000) when the call ends.
 */
export function softphoneRoute(core: Core): UpgradeRoute {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  return {
    pattern: /^\/v1\/sandbox\/calls\/([^/]+)\/ws$/,
    async handle(req, socket, head, match) {
      const accountId = await upgradeAccount(core, req, { agentToken: true });
      const callId = decodeURIComponent(match[1]!);
      const call = await loadCall(core.db, accountId, callId).catch(() => {
        throw new UpgradeRefusal("not_found", `No call with id ${JSON.stringify(callId)} exists on this account.`);
      });
      wss.handleUpgrade(req, socket, head, (ws) => serve(core, ws, callId, call.status));
    },
    close() {
      for (const client of wss.clients) client.close(1001, "server shutting down");
      wss.close();
    },
  };
}

function serve(core: Core, ws: WebSocket, callId: string, status: string): void {
  const send = (frame: Record<string, unknown>) => ws.readyState === ws.OPEN && ws.send(JSON.stringify(frame));
  const unsubscribe = [
    core.bus.subscribe(SANDBOX_SPEECH_CHANNEL, (m) => {
      if (m.call_id === callId) send({ type: "speech", text: m.text, final: m.final, turn_id: m.turn_id });
    }),
    core.bus.subscribe(CALL_STATUS_CHANNEL, (m) => {
      if (m.call_id !== callId) return;
      send({ type: "status", status: m.status });
      if (TERMINAL_STATUSES.has(String(m.status))) ws.close(1000, "call ended");
    }),
  ];
  if (core.carrier instanceof SandboxCarrier) unsubscribe.push(core.carrier.softphoneOpened(callId));
  ws.on("close", () => unsubscribe.forEach((off) => off()));
  send({ type: "status", status });
  if (TERMINAL_STATUSES.has(status)) ws.close(1000, "call ended");

  ws.on("message", (data) => {
    const frame = parseFrame(String(data));
    if (typeof frame === "string") return send({ type: "error", code: "validation_error", message: frame });
    // The call was checked to be the account's at the upgrade: frames act on it directly.
    const act = async () => {
      const party = farParty(core);
      if (frame.type === "say") send({ type: "said", turn_id: (await party.say(callId, frame.text)).turnId });
      else if (frame.type === "dtmf") send({ type: "said", turn_id: (await party.pressKeys(callId, frame.digits)).turnId });
      else if (frame.type === "interrupt") await party.interrupt(callId);
      else await party.hangup(callId);
    };
    act().catch((error: unknown) => {
      if (error instanceof AppError) send({ type: "error", code: error.code, message: error.detail });
      else core.logger.error({ err: error, call_id: callId }, "softphone frame failed");
    });
  });
}
