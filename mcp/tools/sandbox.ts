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
import { defineTool } from "../tool.js";

/** The sandbox carrier's far party: tools to play the other side of a call or text (CARRIER=sandbox only). */
export const sandboxTools = [
  defineTool({
    name: "simulate_inbound_call",
    title: "Sandbox: call one of your numbers",
    description: "Sandbox only: someone calls to_number (one of the account's numbers) from from_number; its agent answers and hears call.received.",
    input: [SandboxInboundCallBody],
    output: SandboxCallStarted,
    hints: { spendsMoney: true },
    run: ({ core, accountId }, args) => ringInbound(core, accountId, args),
  }),
  defineTool({
    name: "simulate_caller_speech",
    title: "Sandbox: the other party speaks",
    description: "Sandbox only: the other party of a connected call says text, one finished turn; the agent hears it as call.utterance.",
    input: [CallIdParams, SandboxSayBody],
    output: SandboxTurnOpened,
    hints: {},
    run: ({ core, accountId }, args) => farPartySays(core, accountId, args.call_id, args.text),
  }),
  defineTool({
    name: "simulate_caller_hangup",
    title: "Sandbox: the other party hangs up",
    description: "Sandbox only: the other party hangs up; the agent hears call.completed.",
    input: [CallIdParams],
    output: Call,
    hints: { destructive: true },
    run: ({ core, accountId }, args) => farPartyHangsUp(core, accountId, args.call_id),
  }),
  defineTool({
    name: "simulate_inbound_text",
    title: "Sandbox: text one of your numbers",
    description: "Sandbox only: from_number texts to_number (one of the account's numbers); its agent hears sms.received and list_messages shows it.",
    input: [SandboxInboundSmsBody],
    output: SandboxSmsDelivered,
    hints: { spendsMoney: true },
    run: ({ core, accountId }, args) => textInbound(core, accountId, args),
  }),
];
