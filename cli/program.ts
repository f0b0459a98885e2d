import { Command } from "commander";
import { serviceVersion } from "../core/db/paths.js";
import { addApiCommands } from "./api-commands.js";
import { addServiceCommands } from "./service-commands.js";

/** The `agentline` command: the service itself (serve, mcp, admin) and a client of its API. */
export function buildProgram(): Command {
  const program = new Command("agentline")
    .description("A phone line for software agents: run the service, or use its API from the terminal.")
    .version(serviceVersion)
    .option("--json", "print results as JSON (for scripts)")
    .option("--base-url <url>", "the service (default: AGENTLINE_BASE_URL, the saved login, else http://127.0.0.1:8080)")
    .option("--api-key <key>", "an API key (default: AGENTLINE_API_KEY, else the key `agentline login` saved)")
    .showHelpAfterError("(add --help for usage)")
    .addHelpText(
      "after",
      `
Start the service with \`npm start\` (or \`agentline serve\`), then, in another terminal:
  agentline login --email you@example.com
  AGENT=$(agentline agents create "Front desk")
  agentline numbers buy --agent $AGENT --area-code 415
  CALL=$(agentline call +14155550199 --agent $AGENT)
  agentline say $CALL "Hi, do you have sourdough today?"
  agentline transcript $CALL`,
    );
  addServiceCommands(program);
  addApiCommands(program);
  return program;
}
