import WebSocket from "ws";

export interface Heard {
  turn_id: string | null;
  lines: Array<{ text: string; final: boolean }>;
  /** The agent gave its final answer to the turn. */
  answered: boolean;
}

/**
 * Says one line as the far party of a sandbox call over the softphone WebSocket, and collects
 * what the agent speaks for that turn (interim lines, fillers, the final answer) until the final
 * answer or the timeout.
 */
export function sayAndHear(baseUrl: string, apiKey: string, callId: string, text: string, timeoutMs: number): Promise<Heard> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/v1/sandbox/calls/${encodeURIComponent(callId)}/ws`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const speech: Array<{ text: string; final: boolean; turn_id: string | null }> = [];
  const heard: Heard = { turn_id: null, lines: [], answered: false };
  return new Promise((resolve, reject) => {
    const finish = () => {
      clearTimeout(timer);
      heard.lines = speech.filter((s) => s.turn_id === heard.turn_id).map(({ text, final }) => ({ text, final }));
      ws.close();
      resolve(heard);
    };
    const timer = setTimeout(finish, timeoutMs);
    ws.on("unexpected-response", (_req, res) => {
      clearTimeout(timer);
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => reject(new Error(`the softphone was refused (${res.statusCode}): ${safeDetail(body)}`)));
    });
    ws.on("error", (error) => (clearTimeout(timer), reject(error)));
    ws.on("open", () => ws.send(JSON.stringify({ type: "say", text })));
    ws.on("message", (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type === "said") heard.turn_id = frame.turn_id;
      else if (frame.type === "speech") speech.push(frame);
      else if (frame.type === "error") return (clearTimeout(timer), ws.close(), reject(new Error(frame.message)));
      heard.answered = speech.some((s) => s.final && s.turn_id === heard.turn_id && heard.turn_id !== null);
      if (heard.answered) finish();
    });
    ws.on("close", () => finish());
  });
}

function safeDetail(body: string): string {
  try {
    return JSON.parse(body).detail ?? body;
  } catch {
    return body;
  }
}
