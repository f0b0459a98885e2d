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
    relayOf: (callId: string) => `${socketBase}${TWILIO_PATHS.relay}/${encodeURIComponent(callId)}`,
    amdOf: (callId: string) => `${baseUrl}${TWILIO_PATHS.amd}?call_id=${encodeURIComponent(callId)}`,
    recordingOf: (callId: string) => `${baseUrl}${TWILIO_PATHS.recording}?call_id=${encodeURIComponent(callId)}`,
    /** The relay socket's URL as Twilio was given it, from the path it asked for. */
    relayAt: (pathAndQuery: string) => socketBase + pathAndQuery,
  };
}
