import { Readable } from "node:stream";
import type { TwilioConfig } from "../../config.js";
import type { Logger } from "../../logger.js";
import { CarrierUnavailable, type RecordingAudio } from "../carrier.js";
import { isNotFoundAtTwilio, type TwilioClient, twilioRequest } from "./rest.js";
import type { twilioUrls } from "./urls.js";

/**
 * Starts recording a connected call (both parties, one channel each) with a status callback
 * naming our call. Called at the relay's `setup`, which Twilio opens only after the TwiML's
 * `<Say>` of the recording notice: nothing before the notice is recorded. A failure is logged (the
 * call goes on unrecorded) rather than ending the call.
 */
export async function startTwilioRecording(
  client: TwilioClient,
  urls: ReturnType<typeof twilioUrls>,
  logger: Logger,
  call: { callId: string; callSid: string },
): Promise<void> {
  await twilioRequest("the recording", () =>
    client.calls(call.callSid).recordings.create({
      recordingChannels: "dual",
      recordingStatusCallback: urls.recordingOf(call.callId),
      recordingStatusCallbackMethod: "POST",
      recordingStatusCallbackEvent: ["completed"],
    }),
  ).catch((error: unknown) => logger.error({ err: error, call_id: call.callId, call_sid: call.callSid }, "Twilio did not start the call's recording"));
}

/**
 * A recording's audio (WAV), fetched from Twilio's media URL with the service's credentials and
 * streamed on: the SDK has no media download, so this one GET is made with fetch. The media URL is
 * built from TWILIO_API_URL, never taken from a callback.
 */
export async function fetchTwilioRecording(config: TwilioConfig, recordingSid: string): Promise<RecordingAudio> {
  const url = `${config.apiUrl}/2010-04-01/Accounts/${encodeURIComponent(config.accountSid)}/Recordings/${encodeURIComponent(recordingSid)}.wav`;
  const [user, password] = config.apiKey ? [config.apiKey.sid, config.apiKey.secret] : [config.accountSid, config.authToken];
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` },
      signal: AbortSignal.timeout(config.timeoutMs),
    });
  } catch (error) {
    throw new CarrierUnavailable("Twilio did not answer the recording's download", { cause: error });
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new CarrierUnavailable(`Twilio failed the recording's download (HTTP ${response.status})`);
  }
  const length = Number(response.headers.get("content-length"));
  return {
    contentType: response.headers.get("content-type")?.startsWith("audio/mpeg") ? "audio/mpeg" : "audio/wav",
    contentLength: Number.isInteger(length) && length > 0 ? length : undefined,
    body: Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>),
  };
}

/** Deletes a recording at Twilio; one Twilio no longer has (404) is already what was asked. */
export async function deleteTwilioRecording(client: TwilioClient, recordingSid: string): Promise<void> {
  try {
    await twilioRequest("the recording's deletion", () => client.recordings(recordingSid).remove());
  } catch (error) {
    if (!isNotFoundAtTwilio(error)) throw error;
  }
}
