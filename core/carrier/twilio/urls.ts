/** Where Twilio reaches the service: the paths the gateway mounts for the Twilio carrier. */
export const TWILIO_PATHS = {
  /** Voice webhook of every number: an inbound call. */
  voice: "/twilio/voice",
  /** Messaging webhook of every number: an inbound text. */
  sms: "/twilio/sms",
  /** Status callbacks: of inbound calls (set on the number) and outbound ones (`?call_id=`). */
  status: "/twilio/status",
  /** Status callbacks of sent texts (`?message_id=`). */
  smsStatus: "/twilio/sms-status",
  /** `<Connect action>` of every call: the relay session ended (`?call_id=`); a transfer is answered with `<Dial>`. */
  connect: "/twilio/connect",
  /** A transfer's `<Dial action>`: how the dial went (`DialCallStatus`). */
  transferDial: "/twilio/transfer/dial",
  /** A transfer's `<Number statusCallback>`: the person answered. */
  transferStatus: "/twilio/transfer/status",
  /** A warm transfer's `<Number url>`: the whisper the person hears first. */
  transferWhisper: "/twilio/transfer/whisper",
  /** The ConversationRelay WebSocket of one call: `/twilio/relay/{call_id}`. */
  relay: "/twilio/relay",
  /** Answering machine detection's result of an outbound call (`?call_id=`). */
  amd: "/twilio/amd",
  /** Recording status callbacks (`?call_id=`). */
  recording: "/twilio/recording",
} as const;

/** The absolute URLs Twilio is given, from the public base URL (`BASE_URL`). */
export function twilioUrls(baseUrl: string) {
  const socketBase = baseUrl.replace(/^http/, "ws");
  return {
    voice: baseUrl + TWILIO_PATHS.voice,
    sms: baseUrl + TWILIO_PATHS.sms,
    status: baseUrl + TWILIO_PATHS.status,
    statusOf: (callId: string) => `${baseUrl}${TWILIO_PATHS.status}?call_id=${encodeURIComponent(callId)}`,
    smsStatusOf: (messageId: string) => `${baseUrl}${TWILIO_PATHS.smsStatus}?message_id=${encodeURIComponent(messageId)}`,
    connectOf: (callId: string) => `${baseUrl}${TWILIO_PATHS.connect}?call_id=${encodeURIComponent(callId)}`,
    transferDialOf: (callId: string) => `${baseUrl}${TWILIO_PATHS.transferDial}?call_id=${encodeURIComponent(callId)}`,
    transferStatusOf: (callId: string) => `${baseUrl}${TWILIO_PATHS.transferStatus}?call_id=${encodeURIComponent(callId)}`,
    transferWhisperOf: (callId: string) => `${baseUrl}${TWILIO_PATHS.transferWhisper}?call_id=${encodeURIComponent(callId)}`,
    relayOf: (callId: string) => `${socketBase}${TWILIO_PATHS.relay}/${encodeURIComponent(callId)}`,
    amdOf: (callId: string) => `${baseUrl}${TWILIO_PATHS.amd}?call_id=${encodeURIComponent(callId)}`,
    recordingOf: (callId: string) => `${baseUrl}${TWILIO_PATHS.recording}?call_id=${encodeURIComponent(callId)}`,
    /** The relay socket's URL as Twilio was given it, from the path it asked for. */
    relayAt: (pathAndQuery: string) => socketBase + pathAndQuery,
  };
}
