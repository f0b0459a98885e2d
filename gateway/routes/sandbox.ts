import { Call, CallIdParams } from "../../core/calls/schemas.js";
import { farPartyHangsUp, farPartySays, ringInbound, textInbound } from "../../core/carrier/sandbox/far-party.js";
import {
  SandboxCallStarted,
  SandboxInboundCallBody,
  SandboxInboundSmsBody,
  SandboxSayBody,
  SandboxSmsDelivered,
  SandboxTurnOpened,
} from "../../core/carrier/sandbox/schemas.js";
import { defineRoute } from "../http/route.js";

const tags = ["Sandbox"];

/** The sandbox carrier's far party: mounted only with a carrier that offers one (core/carrier/carrier-kind.ts). */
export const sandboxRoutes = [
  defineRoute({
    operationId: "sandboxInboundCall",
    method: "post",
    path: "/v1/sandbox/inbound/calls",
    summary: "Sandbox: ring one of your numbers",
    description:
      "Its agent answers at once (`call.received`). Drive the caller with /say and /hangup, or live over the softphone WebSocket /v1/sandbox/calls/{call_id}/ws.",
    tags,
    auth: "api_key_or_agent_token",
    body: SandboxInboundCallBody,
    response: { status: 201, description: "The call", schema: SandboxCallStarted },
    errors: [402, 404, 409],
    handler: ({ core, auth, body }) => ringInbound(core, auth.accountId, body),
  }),
  defineRoute({
    operationId: "sandboxSay",
    method: "post",
    path: "/v1/sandbox/calls/{call_id}/say",
    summary: "Sandbox: the far party speaks one turn",
    description: "Opens a turn: the agent hears `call.utterance`.",
    tags,
    auth: "api_key_or_agent_token",
    params: CallIdParams,
    body: SandboxSayBody,
    response: { status: 201, description: "The turn opened", schema: SandboxTurnOpened },
    errors: [409],
    handler: ({ core, auth, params, body }) => farPartySays(core, auth.accountId, params.call_id, body.text),
  }),
  defineRoute({
    operationId: "sandboxHangup",
    method: "post",
    path: "/v1/sandbox/calls/{call_id}/hangup",
    summary: "Sandbox: the far party hangs up",
    tags,
    auth: "api_key_or_agent_token",
    params: CallIdParams,
    response: { status: 200, description: "The call after the far party hung up", schema: Call },
    handler: ({ core, auth, params }) => farPartyHangsUp(core, auth.accountId, params.call_id),
  }),
  defineRoute({
    operationId: "sandboxInboundSms",
    method: "post",
    path: "/v1/sandbox/inbound/sms",
    summary: "Sandbox: text one of your numbers",
    description: "Its agent hears `sms.received`; the text appears in /v1/messages.",
    tags,
    auth: "api_key_or_agent_token",
    body: SandboxInboundSmsBody,
    response: { status: 201, description: "The message stored", schema: SandboxSmsDelivered },
    errors: [402, 404, 409],
    handler: ({ core, auth, body }) => textInbound(core, auth.accountId, body),
  }),
];
