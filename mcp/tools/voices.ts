import { listOf, Pagination } from "../../core/schemas/common.js";
import { AccountVoice, getAccountVoice, resetAccountVoice, SetAccountVoiceBody, setAccountVoice } from "../../core/voices/account-voice.js";
import { listVoices, Voice } from "../../core/voices/catalogue.js";
import { defineTool, NoInput } from "../tool.js";

export const voiceTools = [
  defineTool({
    name: "list_voices",
    title: "List voices",
    description: "Lists the voice presets agents can speak with; voice_id is what create_agent, update_agent and set_default_voice take.",
    input: [Pagination],
    output: listOf(Voice),
    hints: { readOnly: true },
    run: async (_context, args) => listVoices(args),
  }),
  defineTool({
    name: "get_default_voice",
    title: "Get the account's default voice",
    description: "The voice agents without a voice_id of their own speak with, and whether it was chosen or is the system default.",
    input: [NoInput],
    output: AccountVoice,
    hints: { readOnly: true },
    run: ({ core, accountId }) => getAccountVoice(core, accountId),
  }),
  defineTool({
    name: "set_default_voice",
    title: "Set the account's default voice",
    description: "Sets the voice agents without their own voice_id speak with, from their next call.",
    input: [SetAccountVoiceBody],
    output: AccountVoice,
    hints: { idempotent: true },
    run: ({ core, accountId }, args) => setAccountVoice(core, accountId, args.voice_id),
  }),
  defineTool({
    name: "reset_default_voice",
    title: "Reset the account's default voice",
    description: "Goes back to the system default voice.",
    input: [NoInput],
    output: AccountVoice,
    hints: { idempotent: true },
    run: ({ core, accountId }) => resetAccountVoice(core, accountId),
  }),
];
