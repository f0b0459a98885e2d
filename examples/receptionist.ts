// A receptionist: greets callers, takes a booking and confirms it by text, and hands the call to
// the owner when asked for a person: `npm run example:receptionist`.
// OWNER_NUMBER is the person to hand calls to (default a sandbox number that answers);
// AGENTLINE_* and AGENT_ID as for the scripted agent (without AGENT_ID, a new agent with a number).
import { Agentline, onTurn, type Turn, type TurnAnswer, unwrap } from "@agentline/sdk";

const OWNER_NUMBER = process.env.OWNER_NUMBER ?? "+14155557777";
const GREETING = "Thanks for calling the bakery. I can book a table, or put you through to the owner.";

const agentline = new Agentline();
let agentId = process.env.AGENT_ID;
if (!agentId) {
  agentId = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Bakery receptionist" } })).agent_id;
  const number = unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agentId } }));
  console.log(`created agent ${agentId} with number ${number.phone_number}`);
}
// Inbound callers hear the greeting as soon as the agent answers (it opens no turn).
unwrap(await agentline.api.PATCH("/v1/agents/{agent_id}", { params: { path: { agent_id: agentId } }, body: { greeting: GREETING } }));
const receptionist = agentId;

async function answer(turn: Turn): Promise<TurnAnswer> {
  if (turn.text.startsWith("[transfer failed")) {
    // A warm transfer that found nobody: the caller is back with the agent.
    return "Sorry, the owner can't come to the phone right now. Can I book you a table instead?";
  }
  if (/\b(person|human|owner|manager|someone)\b/i.test(turn.text)) {
    return { transferTo: OWNER_NUMBER, mode: "warm", whisper: "A caller for you from the bakery line.", text: "Putting you through now." };
  }
  const booking = /\bbook\b.*?\bfor (\w+)\b.*?\bat (\w+(?: ?[ap]m)?)/i.exec(turn.text);
  if (booking) {
    const [, people, time] = booking;
    // The confirmation goes by text from the agent's number; the call carries on meanwhile.
    const sent = await agentline
      .sendText(receptionist, turn.fromNumber, `Bakery: your table for ${people} at ${time} is booked. Reply STOP to opt out.`)
      .then((text) => `sent ${text.message_id}`)
      .catch((error: unknown) => `not sent: ${String(error)}`);
    console.log(`booking for ${people} at ${time} on ${turn.callId}; confirmation ${sent}`);
    return `Done: a table for ${people} at ${time}. I've texted you a confirmation.`;
  }
  if (/\b(bye|thanks|thank you)\b/i.test(turn.text)) return { text: "Thank you for calling. Goodbye!", endCall: true };
  return "I can book you a table (say, a table for two at seven), or put you through to the owner.";
}

const connection = agentline.relay(agentId, {
  ...onTurn(answer),
  "call.transfer.answered": (event) => console.log(`call ${event.payload.call_id} is with ${event.payload.to_number}`),
  "call.transfer.failed": (event) => console.log(`transfer of ${event.payload.call_id} failed: ${event.payload.reason}`),
});
await connection.ready;
console.log(`receptionist ${agentId} is answering its calls (Ctrl-C to stop)`);
process.once("SIGINT", () => void connection.close().then(() => process.exit(0)));
process.once("SIGTERM", () => void connection.close().then(() => process.exit(0)));
