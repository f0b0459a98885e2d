import twilio from "twilio";
import { findVoice, SYSTEM_DEFAULT_VOICE_ID } from "../../voices/catalogue.js";

/** Our preset's provider, spelled as ConversationRelay's `ttsProvider` takes it. */
const TTS_PROVIDER = { google: "Google", amazon: "Amazon", elevenlabs: "ElevenLabs" } as const;

/**
 * The TwiML that hands a call to ConversationRelay on our socket: `<Connect><ConversationRelay
 * url voice ttsProvider language interruptible dtmfDetection>` with a `<Parameter>` naming our
 * call (it comes back in the socket's `setup`), and the call's greeting as `welcomeGreeting`
 * (ConversationRelay speaks it once the session connects). Built with the SDK's TwiML builder.
 */
export function relayTwiml(options: {
  socketUrl: string;
  callId: string;
  voiceId: string;
  greeting?: string | null;
  recordingNotice?: string | undefined;
  /** `<Connect action>`: where Twilio asks what next when the session ends (a transfer's `<Dial>`). */
  action?: string;
  /** More `<Parameter>`s for the session's `setup` (a warm transfer that failed names why). */
  parameters?: Record<string, string>;
}): string {
  const voice = findVoice(options.voiceId) ?? findVoice(SYSTEM_DEFAULT_VOICE_ID)!;
  const response = new twilio.twiml.VoiceResponse();
  // A recorded call: the notice is said before the relay connects, and the recording starts at
  // the relay's setup, so nothing is recorded before the notice was heard.
  if (options.recordingNotice) response.say(options.recordingNotice);
  const relay = response.connect(options.action ? { action: options.action, method: "POST" } : {}).conversationRelay({
    url: options.socketUrl,
    ttsProvider: TTS_PROVIDER[voice.provider],
    voice: voice.provider_voice,
    language: voice.language,
    // The caller may talk over the agent (reported as `interrupt`), by voice or keypad.
    interruptible: "any",
    dtmfDetection: true,
    ...(options.greeting ? { welcomeGreeting: options.greeting } : {}),
  });
  relay.parameter({ name: "call_id", value: options.callId });
  for (const [name, value] of Object.entries(options.parameters ?? {})) relay.parameter({ name, value });
  return response.toString();
}

/**
 * A transfer's dial (DESIGN §6b): `<Dial action timeout><Number statusCallback ...>` to the
 * person; a warm transfer adds `<Number url>`, whose TwiML (whisperTwiml) is played to the person
 * when they answer, before the caller is bridged. Dial's `action` reports how it went
 * (`DialCallStatus`).
 */
export function dialTwiml(options: { to: string; action: string; timeoutSeconds: number; statusCallback: string; whisperUrl?: string | undefined }): string {
  const response = new twilio.twiml.VoiceResponse();
  const dial = response.dial({ action: options.action, method: "POST", timeout: options.timeoutSeconds });
  dial.number(
    {
      statusCallback: options.statusCallback,
      statusCallbackMethod: "POST",
      statusCallbackEvent: ["answered", "completed"],
      ...(options.whisperUrl ? { url: options.whisperUrl, method: "POST" } : {}),
    },
    options.to,
  );
  return response.toString();
}

/** What the person hears of a warm transfer before the caller is bridged. */
export function whisperTwiml(whisper: string | null): string {
  const response = new twilio.twiml.VoiceResponse();
  if (whisper) response.say(whisper);
  return response.toString();
}

/** The end of the call: after a bridged transfer, or a session that ended for no transfer. */
export function hangupTwiml(sentence?: string): string {
  const response = new twilio.twiml.VoiceResponse();
  if (sentence) response.say(sentence);
  response.hangup();
  return response.toString();
}

/** A call nobody here answers: a polite sentence, then the line drops. */
export function refusalTwiml(sentence: string): string {
  const response = new twilio.twiml.VoiceResponse();
  response.say(sentence);
  response.hangup();
  return response.toString();
}

/** The answer to a text: nothing to send back. */
export function emptyMessagingTwiml(): string {
  return new twilio.twiml.MessagingResponse().toString();
}
