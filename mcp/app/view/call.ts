// The live call view, bundled with ext-apps' App into one inline HTML document (scripts/build-mcp-app.mjs).
// It has no network of its own: every read and the hang-up are tool calls through the host.
import { App, applyDocumentTheme, applyHostStyleVariables, type McpUiHostContext } from "@modelcontextprotocol/ext-apps";

interface Call {
  call_id: string;
  status: string;
  direction: "inbound" | "outbound";
  from_number: string;
  to_number: string;
  duration_seconds: number | null;
  ended_by: string | null;
}
interface Line {
  role: "user" | "assistant";
  text: string;
}
interface Watched {
  call: Call;
  lines: Line[];
  next: number;
}
interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: { type: string; text?: string }[];
}

const ENDED = new Set(["completed", "busy", "no-answer", "failed", "canceled"]);
/** How often the view asks for new lines while the call is live. */
const POLL_MS = 700;
/** After a failed poll (the host or the service unreachable), a slower retry. */
const RETRY_MS = 3000;

const element = (id: string) => document.getElementById(id) as HTMLElement;
const statusView = element("status");
const partiesView = element("parties");
const linesView = element("lines");
const errorView = element("error");
const hangUp = element("hang-up") as HTMLButtonElement;

const app = new App({ name: "agentline-call-view", version: "1.0.0" });

let callId: string | undefined;
let seen = 0;
let ended = false;
let timer: ReturnType<typeof setTimeout> | undefined;

const textOf = (result: ToolResult) => (result.content ?? []).map((part) => part.text ?? "").join("");

function showError(message: string) {
  errorView.textContent = message;
  errorView.hidden = message === "";
}

function showCall(call: Call) {
  // A poll read before the hang-up may answer after it: an ended call does not come back to life.
  if (ended && !ENDED.has(call.status)) return;
  ended = ENDED.has(call.status);
  const seconds = call.duration_seconds === null ? "" : ` · ${call.duration_seconds} s`;
  const by = call.ended_by ? ` by ${call.ended_by === "agent" ? "the agent" : `the ${call.ended_by}`}` : "";
  statusView.textContent = `${call.status}${ended ? by : ""}${seconds}`;
  statusView.dataset.status = call.status;
  partiesView.textContent = call.direction === "outbound" ? `To ${call.to_number} from ${call.from_number}` : `From ${call.from_number} to ${call.to_number}`;
  hangUp.disabled = ended;
  if (ended && timer !== undefined) clearTimeout(timer);
}

function addLines(lines: Line[]) {
  for (const line of lines) {
    const item = document.createElement("li");
    item.className = line.role;
    const who = document.createElement("b");
    who.textContent = line.role === "user" ? "Caller" : "Agent";
    item.append(who, document.createTextNode(` ${line.text}`));
    linesView.append(item);
  }
  if (lines.length > 0) linesView.lastElementChild?.scrollIntoView({ block: "end" });
}

async function poll() {
  timer = undefined;
  const watching = callId;
  if (!watching) return;
  let wait = POLL_MS;
  try {
    const result = (await app.callServerTool({ name: "watch_call", arguments: { call_id: watching, after: seen } })) as ToolResult;
    if (watching !== callId) return;
    if (result.isError) {
      showError(textOf(result));
      wait = RETRY_MS;
    } else {
      const watched = result.structuredContent as unknown as Watched;
      addLines(watched.lines);
      seen = watched.next;
      showCall(watched.call);
      showError("");
    }
  } catch (error) {
    showError(error instanceof Error ? error.message : String(error));
    wait = RETRY_MS;
  }
  if (!ended && watching === callId) timer = setTimeout(poll, wait);
}

/** Follows a call from its first line (a new call id starts over). */
function watch(id: string) {
  if (id === callId) return;
  callId = id;
  seen = 0;
  ended = false;
  linesView.replaceChildren();
  if (timer !== undefined) clearTimeout(timer);
  void poll();
}

hangUp.addEventListener("click", async () => {
  if (!callId) return;
  hangUp.disabled = true;
  try {
    const result = (await app.callServerTool({ name: "hang_up_call", arguments: { call_id: callId } })) as ToolResult;
    if (result.isError) {
      showError(textOf(result));
      hangUp.disabled = false;
    } else showCall(result.structuredContent as unknown as Call);
  } catch (error) {
    showError(error instanceof Error ? error.message : String(error));
    hangUp.disabled = false;
  }
});

// get_call and transfer_call name the call in their arguments; place_call's result names it.
app.ontoolinput = ({ arguments: args }) => {
  if (typeof args?.call_id === "string") watch(args.call_id);
};
app.ontoolresult = (result: ToolResult) => {
  if (result.isError) return showError(textOf(result));
  const call = result.structuredContent as unknown as Call | undefined;
  if (typeof call?.call_id !== "string") return;
  showCall(call);
  watch(call.call_id);
};
app.onteardown = async () => {
  callId = undefined;
  if (timer !== undefined) clearTimeout(timer);
  return {};
};

/** The host's light or dark theme and its style variables (call.html's CSS reads them, with fallbacks). */
function followHost(context: McpUiHostContext | undefined) {
  if (context?.theme) applyDocumentTheme(context.theme);
  if (context?.styles?.variables) applyHostStyleVariables(context.styles.variables);
}
app.onhostcontextchanged = followHost;

app
  .connect()
  .then(() => followHost(app.getHostContext()))
  .catch((error: unknown) => showError(`Could not reach the host: ${error instanceof Error ? error.message : String(error)}`));
