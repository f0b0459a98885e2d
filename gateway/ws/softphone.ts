import type { IncomingMessage } from "node:http";
import type { WebSocket } from "ws";
import { authenticateAgentToken } from "../../core/auth/agent-tokens.js";
import { authenticateApiKey } from "../../core/auth/api-keys.js";
import { loadCall } from "../../core/calls/call-records.js";
import { CALL_STATUS_CHANNEL } from "../../core/calls/call-status.js";
import { MAX_SPOKEN_TEXT, TERMINAL_STATUSES } from "../../core/calls/schemas.js";
import { SANDBOX_SPEECH_CHANNEL, SandboxCarrier } from "../../core/carrier/sandbox/sandbox-carrier.js";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { farParty } from "../../core/carrier/sandbox/far-party.js";
import { bearerToken } from "../http/authenticate.js";
import { SocketAcceptor } from "./accept.js";
import type { AccountSockets } from "./account-sockets.js";
import { readClientFrame } from "./client-frames.js";
import { closeOnRevoke } from "./close-on-revoke.js";
import { SocketsByKey } from "./sockets-by-key.js";
import { UpgradeRefusal, type UpgradeRoute } from "./upgrades.js";

/** What a softphone client may send. */
type ClientFrame = { type: "say"; text: string } | { type: "dtmf"; digits: string } | { type: "interrupt" } | { type: "hangup" };

function parseFrame(frame: Record<string, unknown>): ClientFrame | string {
  switch (frame.type) {
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

/** Who opens a socket: the account, and the credential (key_id or token_id) that stays watched while it is open. */
export interface UpgradePrincipal {
  accountId: string;
  credentialId: string;
}

/** The account of an upgrade request's bearer API key (or, where allowed, agent token), or a 401 refusal. */
export async function upgradeAccount(core: Core, req: IncomingMessage, options: { agentToken?: boolean } = {}): Promise<UpgradePrincipal> {
  const token = bearerToken(req.headers.authorization);
  const agentToken = token?.startsWith("at_") && options.agentToken;
  const principal = !token ? null : agentToken ? await upgradeAgentToken(core, token) : await upgradeApiKey(core, token);
  if (!principal) {
    const why = !token ? "Send your API key as 'Authorization: Bearer sk_...' on the upgrade request." : `The ${agentToken ? "agent_token" : "API key"} is invalid or has been revoked.`;
    throw new UpgradeRefusal("unauthorized", why, {
      "WWW-Authenticate": 'Bearer realm="agentline"',
    });
  }
  return principal;
}

async function upgradeApiKey(core: Core, token: string): Promise<UpgradePrincipal | null> {
  const principal = await authenticateApiKey(core, token);
  return principal && { accountId: principal.accountId, credentialId: principal.keyId };
}

async function upgradeAgentToken(core: Core, token: string): Promise<UpgradePrincipal | null> {
  const principal = await authenticateAgentToken(core, token);
  return principal && { accountId: principal.accountId, credentialId: principal.tokenId };
}

/**
 * The sandbox softphone, `/v1/sandbox/calls/{call_id}/ws`: the far party of one of your calls,
 * live. The server sends `{type:"status",status}` now and on every change, and
 * `{type:"speech",text,final,turn_id}` for every line the agent speaks; the client sends `say`,
 * `dtmf`, `interrupt` and `hangup`. The socket closes (1000) when the call ends, and (4401) when
 * the credential that opened it is revoked.
 */
export function softphoneRoute(core: Core, accountSockets: AccountSockets): UpgradeRoute {
  const acceptor = new SocketAcceptor("softphone", 64 * 1024, core.logger);
  const phones = new SocketsByKey<Softphone>();
  const unsubscribe = [
    core.bus.subscribe(SANDBOX_SPEECH_CHANNEL, (m) => phones.each(m.call_id, (phone) => phone.send({ type: "speech", text: m.text, final: m.final, turn_id: m.turn_id }))),
    core.bus.subscribe(CALL_STATUS_CHANNEL, (m) => phones.each(m.call_id, (phone) => phone.status(String(m.status)))),
  ];
  const track = (phone: Softphone) => phones.track(phone.callId, phone);
  return {
    pattern: /^\/v1\/sandbox\/calls\/([^/]+)\/ws$/,
    async handle(req, socket, head, match) {
      const { accountId, credentialId } = await upgradeAccount(core, req, { agentToken: true });
      accountSockets.hold(accountId, socket);
      const callId = decodeURIComponent(match[1]!);
      const call = await loadCall(core.db, accountId, callId).catch(() => {
        throw new UpgradeRefusal("not_found", `No call with id ${JSON.stringify(callId)} exists on this account.`);
      });
      acceptor.accept(req, socket, head, (ws) => {
        closeOnRevoke(core, ws, credentialId);
        new Softphone(core, ws, callId).start(call.status, track);
      });
    },
    close() {
      unsubscribe.forEach((off) => off());
      acceptor.closeAll();
    },
  };
}

/** One open softphone: the far party of one call. */
class Softphone {
  constructor(
    private readonly core: Core,
    private readonly ws: WebSocket,
    readonly callId: string,
  ) {}

  send(frame: Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(frame));
  }

  /** The call's status, now or on a change; the socket closes (1000) once the call has ended. */
  status(status: string): void {
    this.send({ type: "status", status });
    if (TERMINAL_STATUSES.has(status)) this.ws.close(1000, "call ended");
  }

  start(status: string, track: (phone: Softphone) => () => void): void {
    const { core, ws, callId } = this;
    const cleanup = [track(this)];
    if (core.carrier instanceof SandboxCarrier) cleanup.push(core.carrier.softphoneOpened(callId));
    ws.on("close", () => cleanup.forEach((off) => off()));
    this.status(status);
    ws.on("message", (data) => this.onFrame(String(data)));
  }

  private onFrame(data: string): void {
    const { core, callId } = this;
    const read = readClientFrame(data);
    if ("error" in read) return this.send(read.error);
    const frame = parseFrame(read.frame);
    if (typeof frame === "string") return this.send({ type: "error", code: "validation_error", message: frame });
    // The call was checked to be the account's at the upgrade: frames act on it directly.
    const act = async () => {
      const party = farParty(core);
      if (frame.type === "say") this.send({ type: "said", turn_id: (await party.say(callId, frame.text)).turnId });
      else if (frame.type === "dtmf") this.send({ type: "said", turn_id: (await party.pressKeys(callId, frame.digits)).turnId });
      else if (frame.type === "interrupt") await party.interrupt(callId);
      else await party.hangup(callId);
    };
    act().catch((error: unknown) => {
      if (error instanceof AppError) this.send({ type: "error", code: error.code, message: error.detail });
      else core.logger.error({ err: error, call_id: callId }, "softphone frame failed");
    });
  }
}
