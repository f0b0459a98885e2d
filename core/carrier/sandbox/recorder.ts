import { randomBytes } from "node:crypto";
import type { RecordingAudio } from "../carrier.js";

/** The longest sandbox recording's audio, in seconds: the WAV is generated, so it is kept short. */
export const SANDBOX_RECORDING_MAX_SECONDS = 30;
const SAMPLE_RATE = 8000;

/**
 * The sandbox's recordings: started after the notice, finished when the call ends (in the process
 * that started it), and served as a generated WAV as long as the call was, capped at
 * SANDBOX_RECORDING_MAX_SECONDS. Deleted recordings are remembered so a later fetch fails as a
 * carrier's would.
 */
export class SandboxRecorder {
  private readonly running = new Map<string, number>();
  private readonly deleted = new Set<string>();

  start(callId: string): void {
    if (!this.running.has(callId)) this.running.set(callId, Date.now());
  }

  /** Stops the call's recording: its ref and length, or null when the call was not being recorded here. */
  stop(callId: string): { carrierRef: string; durationSeconds: number } | null {
    const started = this.running.get(callId);
    if (started === undefined) return null;
    this.running.delete(callId);
    return { carrierRef: `SBRE${randomBytes(8).toString("hex")}`, durationSeconds: Math.round((Date.now() - started) / 1000) };
  }

  delete(carrierRef: string): void {
    this.deleted.add(carrierRef);
  }

  async audio(recording: { carrierRef: string; durationSeconds: number }): Promise<RecordingAudio> {
    if (this.deleted.has(recording.carrierRef)) throw new Error(`sandbox recording ${recording.carrierRef} was deleted`);
    const body = sandboxWav(Math.min(recording.durationSeconds, SANDBOX_RECORDING_MAX_SECONDS));
    return {
      contentType: "audio/wav",
      contentLength: body.length,
      body: (async function* () {
        yield body;
      })(),
    };
  }
}

/**
 * A mono 16-bit PCM WAV of `seconds` (at least a tenth of a second): a quiet 440 Hz tone, so
 * a player shows something is there. RIFF header as the format defines it.
 */
export function sandboxWav(seconds: number): Buffer {
  const samples = Math.max(SAMPLE_RATE / 10, Math.round(seconds * SAMPLE_RATE));
  const data = samples * 2;
  const wav = Buffer.alloc(44 + data);
  wav.write("RIFF", 0, "ascii");
  wav.writeUInt32LE(36 + data, 4);
  wav.write("WAVE", 8, "ascii");
  wav.write("fmt ", 12, "ascii");
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(SAMPLE_RATE, 24);
  wav.writeUInt32LE(SAMPLE_RATE * 2, 28); // byte rate
  wav.writeUInt16LE(2, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write("data", 36, "ascii");
  wav.writeUInt32LE(data, 40);
  for (let i = 0; i < samples; i++) wav.writeInt16LE(Math.round(1000 * Math.sin((2 * Math.PI * 440 * i) / SAMPLE_RATE)), 44 + i * 2);
  return wav;
}
