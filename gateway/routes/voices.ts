import { listOf, Pagination } from "../../core/schemas/common.js";
import { AccountVoice, getAccountVoice, resetAccountVoice, SetAccountVoiceBody, setAccountVoice } from "../../core/voices/account-voice.js";
import { listVoices, Voice } from "../../core/voices/catalogue.js";
import { defineRoute } from "../http/route.js";

const tags = ["Voices"];

/** The voice catalogue and the account's default voice. */
export const voiceRoutes = [
  defineRoute({
    operationId: "listVoices",
    method: "get",
    path: "/v1/voices",
    summary: "List voice presets",
    description: "Every preset an agent or the account can speak with. `voice_id` is what the other endpoints take.",
    tags,
    auth: "api_key",
    query: Pagination,
    response: { status: 200, description: "A page of voice presets", schema: listOf(Voice).meta({ id: "VoiceList" }) },
    handler: async ({ query }) => listVoices(query),
  }),
  defineRoute({
    operationId: "getAccountVoice",
    method: "get",
    path: "/v1/account/voice",
    summary: "Get the account default voice",
    description: "The voice agents without a `voice_id` of their own speak with; `source` says whether you chose it or it is the system default.",
    tags,
    auth: "api_key",
    response: { status: 200, description: "The account default voice", schema: AccountVoice },
    handler: ({ core, auth }) => getAccountVoice(core, auth.accountId),
  }),
  defineRoute({
    operationId: "setAccountVoice",
    method: "patch",
    path: "/v1/account/voice",
    summary: "Set the account default voice",
    description: "Agents with a `voice_id` of their own keep it; the others speak with this voice on their next call.",
    tags,
    auth: "api_key",
    body: SetAccountVoiceBody,
    response: { status: 200, description: "The new account default voice", schema: AccountVoice },
    handler: ({ core, auth, body }) => setAccountVoice(core, auth.accountId, body.voice_id),
  }),
  defineRoute({
    operationId: "resetAccountVoice",
    method: "delete",
    path: "/v1/account/voice",
    summary: "Reset the account default voice",
    description: "Goes back to the system default. Answers the voice now in effect; repeating it is harmless.",
    tags,
    auth: "api_key",
    response: { status: 200, description: "The account default voice, now the system default", schema: AccountVoice },
    handler: ({ core, auth }) => resetAccountVoice(core, auth.accountId),
  }),
];
