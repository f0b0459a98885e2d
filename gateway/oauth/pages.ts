import { escapeHtml as h } from "../http/notice-page.js";

/**
 * The pages a person sees while an MCP client signs in to their account: the e-mail, the code,
 * the consent. Plain forms that work without JavaScript, in the notice page's style, nothing
 * loaded from anywhere (the headers are the notice page's: no scripts, no framing, no cache).
 */

const STYLE =
  "body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5;color:#222}h1{font-size:1.4rem}" +
  "label{display:block;margin:1rem 0 .25rem}input,select{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}" +
  "button{font:inherit;padding:.5rem 1.2rem;margin:1rem .5rem 0 0}.error{color:#a00}.small{font-size:.9rem;color:#555}ul{padding-left:1.2rem}";

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${h(title)}</title>
<style>${STYLE}</style></head>
<body><h1>${h(title)}</h1>
${body}
</body>
</html>
`;
}

const error = (message: string | undefined) => (message ? `<p class="error" role="alert">${h(message)}</p>` : "");
const csrfField = (csrf: string) => `<input type="hidden" name="csrf" value="${h(csrf)}">`;

export interface SignInView {
  action: string;
  csrf: string;
  clientName: string;
  email?: string | undefined;
  error?: string | undefined;
  /** The AgentID sign-in's form action, when AgentID is configured. */
  agentIdAction?: string | undefined;
}

/** Step one: the e-mail address to send a code to. */
export function signInPage(view: SignInView): string {
  const agentId = view.agentIdAction
    ? `<form method="post" action="${h(view.agentIdAction)}">${csrfField(view.csrf)}<p class="small">Or, for an AI agent with an AgentID:</p><button type="submit">Sign in with AgentID</button></form>`
    : "";
  return page(
    "Sign in to agentline",
    `<p>${h(view.clientName)} asks to connect to your agentline account. Sign in first: we e-mail you a 6-digit code.</p>
${error(view.error)}
<form method="post" action="${h(view.action)}">${csrfField(view.csrf)}
<label for="email">E-mail address</label>
<input id="email" type="email" name="email" autocomplete="email" required maxlength="254" value="${h(view.email ?? "")}">
<button type="submit">Send code</button>
</form>
${agentId}`,
  );
}

export interface CodeView {
  action: string;
  restart: string;
  csrf: string;
  email: string;
  error?: string | undefined;
  /** The code went to the server log (no mail server configured), not to the mailbox. */
  logged?: boolean;
}

/** Step two: the code from the e-mail. */
export function codePage(view: CodeView): string {
  const where = view.logged
    ? "No mail server is configured here, so the code was written to the server's log."
    : `We e-mailed a 6-digit code to ${view.email}.`;
  return page(
    "Enter your code",
    `<p>${h(where)} It works once, for 10 minutes.</p>
${error(view.error)}
<form method="post" action="${h(view.action)}">${csrfField(view.csrf)}
<input type="hidden" name="email" value="${h(view.email)}">
<label for="code">Code</label>
<input id="code" type="text" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required>
<button type="submit">Sign in</button>
</form>
<p class="small"><a href="${h(view.restart)}">Use another address</a></p>`,
  );
}

export interface ConsentView {
  action: string;
  /** Where someone other than the signed-in account holder signs in instead. */
  switchAccount: string;
  csrf: string;
  clientName: string;
  clientId: string;
  redirectHost: string;
  account: string;
  scopes: Array<{ name: string; description: string }>;
  /** The agents the grant may be limited to; absent when the limit is already fixed. */
  agents?: Array<{ agentId: string; name: string }>;
  /** The agent an earlier consent of this connection limited it to. */
  fixedAgent?: { agentId: string; name: string } | null;
  error?: string | undefined;
}

/** Step three: what the client asks for, for whom, and the choice. */
export function consentPage(view: ConsentView): string {
  const scopes = view.scopes.map((s) => `<li><strong>${h(s.name)}</strong>: ${h(s.description)}</li>`).join("\n");
  const limit =
    view.fixedAgent !== undefined
      ? `<p>${view.fixedAgent ? `This connection is limited to the agent ${h(view.fixedAgent.name)} (${h(view.fixedAgent.agentId)}).` : "This connection covers every agent of the account."}</p>`
      : `<label for="agent_id">Agents it may see and act for</label>
<select id="agent_id" name="agent_id"><option value="">All agents of the account</option>${(view.agents ?? [])
          .map((a) => `<option value="${h(a.agentId)}">Only ${h(a.name)} (${h(a.agentId)})</option>`)
          .join("")}</select>`;
  const identity = view.clientId === view.clientName ? "" : ` <span class="small">(client ${h(view.clientId)})</span>`;
  return page(
    `Connect ${view.clientName}?`,
    `<p><strong>${h(view.clientName)}</strong>${identity} asks to use the agentline account <strong>${h(view.account)}</strong>. Allowing sends it back to <strong>${h(view.redirectHost)}</strong>.</p>
<p>It asks to:</p>
<ul>
${scopes}
</ul>
${error(view.error)}
<form method="post" action="${h(view.action)}">${csrfField(view.csrf)}
${limit}
<button type="submit" name="Allow" value="allow">Allow</button>
<button type="submit" name="Deny" value="deny">Deny</button>
</form>
<p class="small">Not ${h(view.account)}? <a href="${h(view.switchAccount)}">Sign in with another address</a>.</p>
<p class="small">You can disconnect it at any time: GET /v1/auth/connections lists what is connected, DELETE /v1/auth/connections/{id} disconnects it.</p>`,
  );
}

/** A dead end (an expired sign-in, a refused client), with what to do instead. */
export function problemPage(title: string, message: string, detail?: string): string {
  return page(title, `<p>${h(message)}</p>${detail ? `<p class="small">${h(detail)}</p>` : ""}`);
}
