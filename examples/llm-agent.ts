// The same agent, answered by any OpenAI-compatible chat endpoint: `npm run example:llm`.
// LLM_BASE_URL (default https://api.openai.com/v1), LLM_API_KEY, LLM_MODEL (default gpt-4o-mini);
// AGENTLINE_* and AGENT_ID as for the scripted agent. The answer is streamed: each finished
// sentence but the last is spoken at once as an interim line, the last one ends the turn.
import { Agentline, onTurn, type Turn, unwrap } from "@agentline/sdk";

const LLM_BASE_URL = (process.env.LLM_BASE_URL ?? "https://api.openai.com/v1").replace(/\/+$/, "");
const LLM_MODEL = process.env.LLM_MODEL ?? "gpt-4o-mini";
const PROMPT = "You answer the phone for a small bakery. Be brief and friendly: one or two short sentences, no lists, no markdown.";

/** The model's answer to the call so far, sentence by sentence as it streams in. */
async function* answer(turn: Turn): AsyncGenerator<string> {
  const response = await fetch(`${LLM_BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.LLM_API_KEY ?? ""}` },
    body: JSON.stringify({
      model: LLM_MODEL,
      stream: true,
      messages: [{ role: "system", content: PROMPT }, ...turn.conversation.map((line) => ({ role: line.role, content: line.text }))],
    }),
    signal: turn.signal, // a newer caller turn makes this answer moot: stop generating it
  });
  if (!response.ok || !response.body) throw new Error(`the LLM answered ${response.status}: ${await response.text()}`);
  let pending = "";
  let text = "";
  for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
    pending += chunk;
    const events = pending.split("\n\n");
    pending = events.pop() ?? "";
    for (const event of events) {
      const data = event.replace(/^data: ?/, "").trim();
      if (!data || data === "[DONE]") continue;
      text += JSON.parse(data).choices?.[0]?.delta?.content ?? "";
      // Hand over each finished sentence; keep the unfinished rest.
      for (let end = text.search(/[.!?](\s|$)/); end >= 0 && end < text.length - 1; end = text.search(/[.!?](\s|$)/)) {
        yield text.slice(0, end + 1).trim();
        text = text.slice(end + 1);
      }
    }
  }
  if (text.trim()) yield text.trim();
}

const agentline = new Agentline();
let agentId = process.env.AGENT_ID;
if (!agentId) {
  agentId = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Bakery (LLM)" } })).agent_id;
  const number = unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agentId } }));
  console.log(`created agent ${agentId} with number ${number.phone_number}`);
}
const connection = agentline.relay(agentId, onTurn(answer), { onError: (error) => console.error(`turn failed: ${String(error)}`) });
await connection.ready;
console.log(`agent ${agentId} is answering its calls with ${LLM_MODEL} at ${LLM_BASE_URL} (Ctrl-C to stop)`);
process.once("SIGINT", () => void connection.close().then(() => process.exit(0)));
process.once("SIGTERM", () => void connection.close().then(() => process.exit(0)));
