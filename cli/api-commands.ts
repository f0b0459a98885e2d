import { Agentline, type AgentlineEvent, credentialsPath, resolveConnection, unwrap, writeCredentials } from "@agentline/sdk";
import type { Command } from "commander";
import { sayAndHear } from "./far-party.js";
import { CliError, note, print, progress, stdinLines } from "./output.js";

/** Options every API command takes (declared on the program). */
interface GlobalOptions {
  json?: boolean;
  baseUrl?: string;
  apiKey?: string;
}

/** The client and output mode of a command, from the global options, the environment and the saved login. */
function client(command: Command) {
  const options = command.optsWithGlobals<GlobalOptions>();
  const { baseUrl, apiKey } = resolveConnection({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  return { agentline: new Agentline({ baseUrl, apiKey }), json: options.json === true, apiKey };
}

const path = (call_id: string) => ({ params: { path: { call_id } } });

async function login(options: { email?: string }, command: Command): Promise<void> {
  const { agentline, json } = client(command);
  const input = stdinLines();
  try {
    const email = options.email ?? (await input.ask("E-mail address: "));
    const sending = progress(`Asking ${agentline.baseUrl} for a sign-in code for ${email}`);
    const sent = unwrap(await agentline.api.POST("/v1/auth/otp", { body: { email } }));
    // A service with no mail server answers `logged` (older ones say `sent` either way).
    const where =
      String(sent.status) === "logged"
        ? "The service has no mail server: the code is in its log"
        : `A code is on its way to ${sent.email} (with no SMTP_URL the service prints it in its log)`;
    sending.done(`${where}. It expires in ${sent.expires_in_seconds / 60} minutes.`);
    const otp = await input.ask("Code: ");
    const signedIn = unwrap(await agentline.api.POST("/v1/auth/verify", { body: { email, otp } }));
    const saved = writeCredentials({ base_url: agentline.baseUrl, api_key: signedIn.api_key, account_id: signedIn.account_id, email: sent.email });
    print(
      json,
      { account_id: signedIn.account_id, key_id: signedIn.key_id, account_created: signedIn.account_created, credentials: saved },
      `Signed in as ${sent.email} (${signedIn.account_id}). The key is saved in ${saved}.`,
    );
  } finally {
    input.close();
  }
}

async function listAgents(_options: unknown, command: Command): Promise<void> {
  const { agentline, json } = client(command);
  const page = unwrap(await agentline.api.GET("/v1/agents", { params: { query: { limit: 100 } } }));
  print(json, page, page.data.length ? page.data.map((a) => `${a.agent_id}  ${a.name}`) : "(no agents: create one with `agentline agents create <name>`)");
}

async function createAgent(name: string, options: { description?: string; ownerNumber?: string; greeting?: string }, command: Command): Promise<void> {
  const { agentline, json } = client(command);
  const agent = unwrap(
    await agentline.api.POST("/v1/agents", { body: { name, description: options.description, owner_number: options.ownerNumber, greeting: options.greeting } }),
  );
  if (!json) note(`Created agent "${agent.name}".`);
  print(json, agent, agent.agent_id);
}

async function listNumbers(_options: unknown, command: Command): Promise<void> {
  const { agentline, json } = client(command);
  const page = unwrap(await agentline.api.GET("/v1/numbers", { params: { query: { limit: 100 } } }));
  print(json, page, page.data.length ? page.data.map((n) => `${n.phone_number}  ${n.number_id}  ${n.agent_id ?? "(unassigned)"}`) : "(no numbers)");
}

async function buyNumber(
  options: { agent: string; areaCode?: string; country?: string; type?: "local" | "toll_free" | "mobile" },
  command: Command,
): Promise<void> {
  const { agentline, json } = client(command);
  const body = { agent_id: options.agent, area_code: options.areaCode, country: options.country, number_type: options.type };
  const number = unwrap(await agentline.api.POST("/v1/numbers", { body }));
  if (!json) note(`Bought ${number.phone_number} (${number.number_id}) for ${number.agent_id}.`);
  print(json, number, number.phone_number);
}

async function placeCall(
  to: string,
  options: { agent: string; from?: string; greeting?: string; record?: boolean; machineDetection?: string; voicemailMessage?: string },
  command: Command,
): Promise<void> {
  const { agentline, json } = client(command);
  const calling = progress(`Calling ${to}`);
  const body = {
    agent_id: options.agent,
    to_number: to,
    from_number: options.from,
    greeting: options.greeting,
    ...(options.record ? { record: true } : {}),
    ...(options.machineDetection ? { machine_detection: options.machineDetection as "off" | "detect" | "leave_message" } : {}),
    ...(options.voicemailMessage ? { voicemail_message: options.voicemailMessage } : {}),
  };
  const call = unwrap(await agentline.api.POST("/v1/calls", { body }));
  calling.done(`Call ${call.call_id} from ${call.from_number} to ${call.to_number}: ${call.status}.`);
  print(json, call, call.call_id);
}

async function sendText(agentId: string, to: string, words: string[], options: { from?: string }, command: Command): Promise<void> {
  const { agentline, json } = client(command);
  const message = await agentline.sendText(agentId, to, words.join(" "), { fromNumber: options.from });
  note(`Text ${message.message_id} from ${message.from_number} to ${message.to_number}: ${message.segments} segment(s), ${message.status}.`);
  print(json, message, message.message_id);
}

async function hangUp(callId: string, _options: unknown, command: Command): Promise<void> {
  const { agentline, json } = client(command);
  const call = unwrap(await agentline.api.POST("/v1/calls/{call_id}/hangup", path(callId)));
  print(json, call, `${call.call_id}: ${call.status}`);
}

async function transfer(callId: string, to: string, options: { warm?: boolean; whisper?: string }, command: Command): Promise<void> {
  const { agentline, json } = client(command);
  if (options.whisper !== undefined && !options.warm) throw new CliError("--whisper is for a warm transfer: add --warm");
  const body = {
    to_number: to,
    mode: options.warm ? ("warm" as const) : ("cold" as const),
    ...(options.whisper !== undefined ? { whisper: options.whisper } : {}),
  };
  const call = unwrap(await agentline.api.POST("/v1/calls/{call_id}/transfer", { ...path(callId), body }));
  print(json, call, `${call.call_id}: transferring to ${to} (${body.mode}): ${call.transfer_status}`);
}

async function say(callId: string, words: string[], options: { wait: boolean; timeout: string }, command: Command): Promise<void> {
  const { agentline, json, apiKey } = client(command);
  const text = words.join(" ");
  if (!options.wait) {
    const said = unwrap(await agentline.api.POST("/v1/sandbox/calls/{call_id}/say", { ...path(callId), body: { text } }));
    print(json, said, said.turn_id);
    return;
  }
  const key = apiKey;
  if (!key) throw new CliError("no API key: run `agentline login` or set AGENTLINE_API_KEY");
  const waiting = progress(`The caller says "${text}"; waiting for the agent's answer`);
  const heard = await sayAndHear(agentline.baseUrl, key, callId, text, Number(options.timeout) * 1000);
  waiting.done();
  print(
    json,
    heard,
    heard.lines.map((l) => `agent${l.final ? "" : " (interim)"}: ${l.text}`),
  );
  if (!heard.answered) throw new CliError(`the agent gave no final answer within ${options.timeout} s (is its runtime connected to the relay?)`);
}

async function pressKeys(callId: string, digits: string, _options: unknown, command: Command): Promise<void> {
  const { agentline, json } = client(command);
  const sent = await agentline.sendDigits(callId, digits);
  print(json, sent, `${sent.call_id}: pressed ${sent.digits}`);
}

async function transcript(callId: string, _options: unknown, command: Command): Promise<void> {
  const { agentline, json } = client(command);
  const lines = unwrap(await agentline.api.GET("/v1/calls/{call_id}/transcript", path(callId)));
  print(json, lines, lines.length ? lines.map((l) => `${l.role === "user" ? "caller" : "agent"}: ${l.text}`) : "(nothing said yet)");
}

/** One line per event, for a person watching. */
function describeEvent(event: AgentlineEvent): string {
  const time = event.created_at.slice(11, 19);
  const p = event.payload as Record<string, unknown>;
  const detail =
    event.event_type === "call.utterance"
      ? `${event.call_id}  caller: "${p.text}"`
      : event.event_type === "sms.received"
        ? `${p.from_number}: "${p.text}"`
        : event.event_type.startsWith("call.")
          ? `${p.call_id}  ${p.from_number} → ${p.to_number}${p.status ? `  ${p.status}` : ""}`
          : JSON.stringify(p);
  return `${time}  ${event.event_type.padEnd(16)}  ${detail}`;
}

async function tail(options: { agent: string; count?: string; runtime: string }, command: Command): Promise<void> {
  const { agentline, json } = client(command);
  const limit = options.count === undefined ? Infinity : Number(options.count);
  if (!(limit > 0)) throw new CliError("--count must be a positive number");
  let received = 0;
  let finish: (error?: unknown) => void = () => {};
  const finished = new Promise<void>((resolve, reject) => (finish = (error) => (error ? reject(error) : resolve())));
  const connecting = progress(`Connecting to the relay of ${options.agent}`);
  const connection = agentline.relay(
    options.agent,
    {
      "*": (event) => {
        if (received >= limit) return;
        received += 1;
        process.stdout.write(`${json ? JSON.stringify(event) : describeEvent(event)}\n`);
        if (received >= limit) finish();
      },
    },
    {
      runtime: options.runtime,
      onError: (error) => finish(error),
      onStatus: (status) => status === "reconnecting" && note("relay connection lost; reconnecting…"),
    },
  );
  await connection.ready;
  if (connection.status === "open") connecting.done(`Listening for ${options.agent}'s events (this takes over its relay connection; Ctrl-C to stop).`);
  process.once("SIGINT", () => finish());
  try {
    await finished;
  } finally {
    await connection.close();
  }
}

/** Adds the commands that use the API of a running service (they take --json, --base-url, --api-key). */
export function addApiCommands(program: Command): void {
  program
    .command("login")
    .description("sign in with a one-time code (read from the terminal or standard input) and save the API key for the CLI and the SDK")
    .option("--email <address>", "your e-mail address (asked for when left out)")
    .addHelpText("after", `\nThe key is saved in ${credentialsPath() ?? "~/.config/agentline/config.json"} (mode 0600), with the service's URL.`)
    .action(login);

  const agents = program.command("agents").description("list and create agents");
  agents.command("list", { isDefault: true }).description("list your agents (the default)").action(listAgents);
  agents
    .command("create <name>")
    .description("create an agent; prints its id")
    .option("--description <text>", "what it is for")
    .option("--owner-number <e164>", "your own phone number: calls from it are owner calls")
    .option("--greeting <text>", "what the agent says first when it answers a call")
    .action(createAgent);

  const numbers = program.command("numbers").description("list and buy phone numbers");
  numbers.command("list", { isDefault: true }).description("list your numbers (the default)").action(listNumbers);
  numbers
    .command("buy")
    .description("buy a number for an agent; prints the number")
    .requiredOption("--agent <agent_id>", "the agent that answers it")
    .option("--area-code <code>", "e.g. 415")
    .option("--country <iso>", "two letters, default US")
    .option("--type <type>", "local, toll_free or mobile (default local)")
    .action(buyNumber);

  program
    .command("call <to_number>")
    .description("place a call from the agent's number; prints the call id")
    .requiredOption("--agent <agent_id>", "the agent that calls")
    .option("--from <e164>", "which of the agent's numbers to call from (default: its oldest)")
    .option("--greeting <text>", "what the agent says as soon as the callee answers")
    .option("--record", "record the call (the other party hears the recording notice first)")
    .option("--machine-detection <mode>", "off, detect (call.answered_by says who answered) or leave_message")
    .option("--voicemail-message <text>", "with --machine-detection leave_message: what is left on an answering machine")
    .action(placeCall);
  program.command("hangup <call_id>").description("hang up a call").action(hangUp);
  program
    .command("transfer <call_id> <to_number>")
    .description("hand a live call to a person: cold (the agent leaves at once) unless --warm")
    .option("--warm", "warm: the person hears --whisper first; if nobody answers, the caller comes back to the agent")
    .option("--whisper <text>", "with --warm: what the person hears before the caller is put through")
    .action(transfer);
  program
    .command("say <call_id> <text...>")
    .description("sandbox only: the far party of a call says something, and you hear the agent's answer")
    .option("--no-wait", "only say it; do not wait for the answer (prints the turn id)")
    .option("--timeout <seconds>", "how long to wait for the answer", "30")
    .action(say);
  program.command("digits <call_id> <keys>").description("press keys on a live call (0-9, *, #; w waits half a second), for a phone menu").action(pressKeys);
  program.command("transcript <call_id>").description("print what was said on a call").action(transcript);
  program
    .command("text <agent_id> <to_number> <text...>")
    .description("send a text from the agent's number; prints the message id")
    .option("--from <number>", "another of the agent's numbers to send from")
    .action(sendText);

  const events = program.command("events").description("watch an agent's events");
  events
    .command("tail")
    .description("hold the agent's relay and print each event as it arrives (and acknowledge it)")
    .requiredOption("--agent <agent_id>", "the agent whose events to watch")
    .option("--count <n>", "stop after this many events")
    .option("--runtime <label>", "the runtime label the service records", "cli")
    .action(tail);
}
