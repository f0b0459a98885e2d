import { z } from "zod";
import { type Page, type Pagination, toPage } from "../schemas/common.js";

/**
 * The voice presets the service offers. Each maps onto a text-to-speech voice that Twilio
 * ConversationRelay speaks: `provider` is its `ttsProvider` and `provider_voice` its `voice`
 * attribute, exactly as Twilio spells them (Amazon Polly names without the `Polly.` prefix that
 * `<Say>` uses). Sources: Twilio's `<ConversationRelay>` reference (providers and the default
 * voice of each) and Twilio's text-to-speech voice list (the Polly and Google names).
 *
 * The keys are our own stable ids: clients store them, so a preset is never renamed; a voice a
 * provider withdraws is remapped under the same id rather than removed.
 */
const PRESETS = {
  mark: {
    name: "Mark",
    language: "en-US",
    gender: "male",
    provider: "elevenlabs",
    provider_voice: "UgBBYS2sOqTuMpoF3BR0",
    description: "Relaxed, natural American male voice tuned for conversation. ConversationRelay's own default voice.",
  },
  jessica: {
    name: "Jessica",
    language: "en-US",
    gender: "female",
    provider: "elevenlabs",
    provider_voice: "g6xIsTj2HwM6VR4iXFCw",
    description: "Warm, expressive and chatty American female voice.",
  },
  "journey-o": {
    name: "Journey O",
    language: "en-US",
    gender: "female",
    provider: "google",
    provider_voice: "en-US-Journey-O",
    description: "Google's conversational American female voice; ConversationRelay's default Google voice.",
  },
  "journey-d": {
    name: "Journey D",
    language: "en-US",
    gender: "male",
    provider: "google",
    provider_voice: "en-US-Journey-D",
    description: "Google's conversational American male voice.",
  },
  joanna: {
    name: "Joanna",
    language: "en-US",
    gender: "female",
    provider: "amazon",
    provider_voice: "Joanna-Neural",
    description: "Clear American female voice (Amazon Polly neural); ConversationRelay's default Amazon voice.",
  },
  matthew: {
    name: "Matthew",
    language: "en-US",
    gender: "male",
    provider: "amazon",
    provider_voice: "Matthew-Neural",
    description: "Steady American male voice (Amazon Polly neural).",
  },
  amy: {
    name: "Amy",
    language: "en-GB",
    gender: "female",
    provider: "amazon",
    provider_voice: "Amy-Neural",
    description: "British English female voice (Amazon Polly neural).",
  },
  brian: {
    name: "Brian",
    language: "en-GB",
    gender: "male",
    provider: "amazon",
    provider_voice: "Brian-Neural",
    description: "British English male voice (Amazon Polly neural).",
  },
  lucia: {
    name: "Lucía",
    language: "es-ES",
    gender: "female",
    provider: "amazon",
    provider_voice: "Lucia-Neural",
    description: "Castilian Spanish female voice (Amazon Polly neural).",
  },
  sergio: {
    name: "Sergio",
    language: "es-ES",
    gender: "male",
    provider: "amazon",
    provider_voice: "Sergio-Neural",
    description: "Castilian Spanish male voice (Amazon Polly neural).",
  },
  lea: {
    name: "Léa",
    language: "fr-FR",
    gender: "female",
    provider: "amazon",
    provider_voice: "Lea-Neural",
    description: "French female voice (Amazon Polly neural).",
  },
  remi: {
    name: "Rémi",
    language: "fr-FR",
    gender: "male",
    provider: "amazon",
    provider_voice: "Remi-Neural",
    description: "French male voice (Amazon Polly neural).",
  },
  vicki: {
    name: "Vicki",
    language: "de-DE",
    gender: "female",
    provider: "amazon",
    provider_voice: "Vicki-Neural",
    description: "German female voice (Amazon Polly neural).",
  },
  daniel: {
    name: "Daniel",
    language: "de-DE",
    gender: "male",
    provider: "amazon",
    provider_voice: "Daniel-Neural",
    description: "German male voice (Amazon Polly neural).",
  },
} as const satisfies Record<string, Omit<Voice, "voice_id">>;

type VoiceIdValue = keyof typeof PRESETS;

/**
 * The voice in effect when neither the agent nor the account chose one: the voice Twilio
 * ConversationRelay itself uses when none is named, so "system default" sounds the same whether
 * the service names it or the carrier falls back to it.
 */
export const SYSTEM_DEFAULT_VOICE_ID: VoiceIdValue = "mark";

/** A voice preset id; anything outside the catalogue is a 422 naming the field. */
export const VoiceId = z
  .enum(Object.keys(PRESETS) as [VoiceIdValue, ...VoiceIdValue[]])
  .meta({ description: "A voice preset id from GET /v1/voices", example: "joanna" });

/** A voice preset as the API shows it. */
export const Voice = z
  .object({
    voice_id: z.string().meta({ description: "Our stable id for the preset; use it wherever a voice_id is asked for.", example: "joanna" }),
    name: z.string(),
    language: z.string().meta({ description: "BCP 47 tag of the language and accent the voice speaks", example: "en-US" }),
    gender: z.enum(["female", "male"]),
    provider: z.enum(["google", "amazon", "elevenlabs"]).meta({ description: "The text-to-speech provider behind the voice" }),
    provider_voice: z.string().meta({ description: "The provider's own name for the voice, as the carrier is given it", example: "Joanna-Neural" }),
    description: z.string(),
  })
  .meta({ id: "Voice" });
export type Voice = z.infer<typeof Voice>;

/** Every preset, in catalogue order (American English first, then by language). */
export const VOICES: readonly Voice[] = Object.entries(PRESETS).map(([voice_id, preset]) => ({ voice_id, ...preset }));

const byId = new Map(VOICES.map((voice) => [voice.voice_id, voice]));

/** The preset with this id, or undefined when the id is not in the catalogue. */
export function findVoice(voiceId: string): Voice | undefined {
  return byId.get(voiceId);
}

/** One page of the catalogue, in the envelope every list uses. */
export function listVoices(page: Pagination): Page<Voice> {
  return toPage(VOICES.slice(page.offset, page.offset + page.limit + 1), page, (voice) => voice);
}
