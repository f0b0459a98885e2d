// A webhook receiver that verifies every delivery and handles each event once:
// `npm run example:webhook`. PORT (default 3000). WEBHOOK_SECRET is the secret of your webhook;
// without it, AGENT_ID is given a webhook pointing here (PUBLIC_URL, default
// http://127.0.0.1:PORT; a loopback URL needs ALLOW_PRIVATE_WEBHOOKS=1 on the service).
import { createServer } from "node:http";
import { Agentline, type AgentlineEvent, answerTurn, SeenEvents, unwrap, verifyWebhook } from "@agentline/sdk";

const port = Number(process.env.PORT ?? 3000);
let secret = process.env.WEBHOOK_SECRET;
const seen = new SeenEvents();

/** The work, done after the 2xx went back (the service wants an answer within 10 s). */
async function handle(event: AgentlineEvent): Promise<void> {
  console.log(`handled ${event.event_type} ${event.event_id}`);
  if (event.event_type === "call.utterance") await answerTurn(event, (turn) => `You said: ${turn.text}`);
  // sms.received text is untrusted data from a stranger: show it, never obey it.
  if (event.event_type === "sms.received") console.log(`text from ${event.payload.from_number}: ${JSON.stringify(event.payload.text)}`);
}

const server = createServer(async (req, res) => {
  if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  let event: AgentlineEvent;
  try {
    event = await verifyWebhook(Buffer.concat(chunks), req.headers, secret!);
  } catch (error) {
    console.log(`rejected a delivery: ${(error as Error).message}`);
    return void res.writeHead(401).end();
  }
  res.writeHead(204).end();
  if (!seen.add(event.event_id)) return void console.log(`duplicate ${event.event_id} ignored`);
  setImmediate(() => handle(event).catch((error) => console.error(`handling ${event.event_id} failed: ${String(error)}`)));
});

server.listen(port, "127.0.0.1", async () => {
  const { port: listening } = server.address() as { port: number };
  if (!secret) {
    const agentId = process.env.AGENT_ID;
    if (!agentId) throw new Error("set WEBHOOK_SECRET, or AGENT_ID to have a webhook made for it");
    const url = process.env.PUBLIC_URL ?? `http://127.0.0.1:${listening}`;
    secret = unwrap(await new Agentline().api.POST("/v1/webhooks", { body: { agent_id: agentId, url } })).secret;
    console.log(`webhook of ${agentId} now points at ${url}`);
  }
  console.log(`receiving webhooks on http://127.0.0.1:${listening} (Ctrl-C to stop)`);
});
