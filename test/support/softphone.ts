import { FrameSocket, openSocket } from "../../harness/frame-socket.js";

/**
 * A real WebSocket client on the sandbox softphone: it hears what the agent says and drives the
 * far party, as the end-to-end tests and the latency benchmark do.
 */
export class Softphone extends FrameSocket {
  static connect(baseUrl: string, callId: string, apiKey: string | null): Promise<Softphone> {
    return openSocket(`${baseUrl.replace(/^http/, "ws")}/v1/sandbox/calls/${callId}/ws`, apiKey, (ws) => new Softphone(ws));
  }

  /** Says a line and returns the turn it opened. */
  async say(text: string): Promise<string> {
    const from = this.frames.length;
    this.send({ type: "say", text });
    const said = await this.next((f) => f.type === "said" || f.type === "error", 5_000, from);
    if (said.type === "error") throw new Error(`say refused: ${said.code}: ${said.message}`);
    return said.turn_id;
  }
}
