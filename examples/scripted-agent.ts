// An agent that answers its calls from a script: `npm run example:scripted`.
// Uses AGENTLINE_API_KEY and AGENTLINE_BASE_URL, else the key `npx agentline login` saved.
// AGENT_ID picks the agent; without it, a new agent with a sandbox number is made.
import { Agentline, onTurn, type TurnAnswer, unwrap } from "@agentline/sdk";

const SCRIPT: Array<[RegExp, TurnAnswer]> = [
  [/sourdough|bread|loaf/i, "We do! Two sourdough loaves are left. Shall I keep one for you?"],
  [/\b(yes|please|keep)\b/i, "Done: one loaf under your name until six tonight."],
  [/\b(bye|thanks|thank you)\b/i, { text: "Thank you for calling the bakery. Goodbye!", endCall: true }],
];
const FALLBACK = "Sorry, I only know about bread today. Would you like a sourdough loaf?";

const agentline = new Agentline();
let agentId = process.env.AGENT_ID;
if (!agentId) {
  agentId = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Bakery (scripted)" } })).agent_id;
  const number = unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agentId } }));
  console.log(`created agent ${agentId} with number ${number.phone_number}`);
}

const connection = agentline.relay(agentId, {
  ...onTurn((turn) => SCRIPT.find(([pattern]) => pattern.test(turn.text))?.[1] ?? FALLBACK),
  "call.completed": (event) => console.log(`call ${event.payload.call_id} ended after ${event.payload.duration_seconds} s`),
});
await connection.ready;
console.log(`agent ${agentId} is answering its calls (Ctrl-C to stop)`);
process.once("SIGINT", () => void connection.close().then(() => process.exit(0)));
process.once("SIGTERM", () => void connection.close().then(() => process.exit(0)));
