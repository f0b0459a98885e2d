import type { CallStatus } from "../../db/schema/calls.js";
import type { AnsweredBy, EndedBy } from "../carrier.js";

/** What a Twilio status callback reports, in the service's terms. */
export interface TwilioStatus {
  status: CallStatus;
  /** Who ended the call, when the status is an end. */
  endedBy: EndedBy | undefined;
  /** Twilio's measured talk time (`CallDuration`), on an end. */
  durationSeconds: number | undefined;
}

const STATUSES: Record<string, CallStatus> = {
  queued: "queued",
  // Twilio's `initiated` is the call leaving its queue: still not ringing.
  initiated: "queued",
  ringing: "ringing",
  "in-progress": "in-progress",
  completed: "completed",
  busy: "busy",
  "no-answer": "no-answer",
  failed: "failed",
  canceled: "canceled",
};

/**
 * Maps answering machine detection's `AnsweredBy` onto who answered: a machine whichever way its
 * greeting ended (the verdict arrives after the beep, or the silence, with DetectMessageEnd).
 */
export function mapAnsweredBy(value: string): AnsweredBy {
  switch (value) {
    case "human":
      return "human";
    case "machine_start":
    case "machine_end_beep":
    case "machine_end_silence":
    case "machine_end_other":
      return "machine";
    case "fax":
      return "fax";
    default:
      return "unknown";
  }
}

/**
 * Maps a status callback's `CallStatus` (and `CallDuration`) onto the service's call status.
 * A call that ends by Twilio's report was ended by the far party (`caller`) when it had
 * connected, else by the carrier (busy, no answer, failed); an end the service caused itself was
 * recorded before Twilio reported it, and the report then changes nothing. Unknown values: null.
 */
export function mapTwilioStatus(form: Record<string, string | string[]>): TwilioStatus | null {
  const status = STATUSES[String(form.CallStatus ?? "")];
  if (!status) return null;
  const duration = Number(form.CallDuration);
  const ended = status !== "queued" && status !== "ringing" && status !== "in-progress";
  return {
    status,
    endedBy: !ended ? undefined : status === "completed" ? "caller" : "carrier",
    durationSeconds: ended && Number.isInteger(duration) && duration >= 0 ? duration : undefined,
  };
}
