import { z } from "zod";

/** The settings of live turns and the relay, each with its documentation (docs/configuration.md is generated from them). */
export const turnSettings = z
  .object({
    TURN_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3_000).meta({
      description: "How long a caller turn waits for an answer before the filler is spoken.",
    }),
    TURN_FILLER_TEXT: z
      .string()
      .min(1)
      .max(200)
      .default("One moment, please.")
      .meta({ description: "What the caller hears, once per turn, when the answer is late." }),
    RELAY_ACK_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000).meta({
      description: "How long the relay waits for an ack before sending an event again.",
    }),
    RELAY_WINDOW: z.coerce.number().int().min(1).max(10_000).default(100).meta({ description: "Most unacknowledged events in flight on one relay socket." }),
    RELAY_PING_MS: z.coerce.number().int().min(100).max(300_000).default(25_000).meta({ description: "Relay keep-alive ping interval." }),
    RECORDING_NOTICE: z.string().trim().min(1).max(300).default("This call is recorded.").meta({
      description: "What the other party hears when a recorded call connects; nothing is recorded before it has been said.",
    }),
  })
  .meta({ title: "Live turns and the relay", description: "How long a caller waits for an agent's answer, and how the relay paces its events." });

export type TurnSettings = z.output<typeof turnSettings>;

/** The live turns' and the relay's part of Config. */
export function turnConfig(e: TurnSettings) {
  return {
    turnTimeoutMs: e.TURN_TIMEOUT_MS,
    turnFillerText: e.TURN_FILLER_TEXT,
    relayAckTimeoutMs: e.RELAY_ACK_TIMEOUT_MS,
    relayWindow: e.RELAY_WINDOW,
    relayPingMs: e.RELAY_PING_MS,
    recordingNotice: e.RECORDING_NOTICE,
  };
}
