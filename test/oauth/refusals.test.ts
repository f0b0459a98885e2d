import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oauthRecords } from "../../core/db/schema/oauth-records.js";
import { authorizationServer } from "../../gateway/oauth/lazy-provider.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { FormBrowser, type PageAnswer, s256, startCallbackServer, startLoopbackHttps } from "../support/oauth.js";
import { startTestService, type TestService } from "../support/service.js";
import { startSmtpServer } from "../support/smtp.js";
import { agentWithNumber } from "../support/telephony.js";

let service: TestService;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let callback: Awaited<ReturnType<typeof startCallbackServer>>;
let account: TestAccount;
let person: FormBrowser;
let mcpUrl: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  [service, callback] = await Promise.all([startTestService({ env: { SMTP_URL: smtp.url, ALLOW_PRIVATE_WEBHOOKS: "1" } }), startCallbackServer()]);
  mcpUrl = `${service.baseUrl}/mcp`;
  account = await createAccount(service.core);
  await agentWithNumber(new Api(service.baseUrl, account.apiKey));
  // One person, signed in once: every authorization below goes straight to the consent page.
  person = new FormBrowser(service.baseUrl);
});
afterAll(async () => {
  await callback?.close();
  await service?.stop();
  await smtp?.close();
});

const who = () => ({ email: account.email, smtp });

/** A raw tools/call on /mcp, as the HTTP answer it gets. */
async function callTool(token: string, name: string, args: Record<string, unknown> = {}) {
  const res = await fetch(mcpUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream", "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** A client registered over RFC 7591, as a plain HTTP client would. */
async function register(redirectUris = [callback.url]) {
  const res = await fetch(`${service.baseUrl}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "Raw client",
      redirect_uris: redirectUris,
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
    }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { client_id: string };
}

function authorizeUrl(params: Record<string, string>) {
  const url = new URL(`${service.baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries({ response_type: "code", redirect_uri: callback.url, code_challenge_method: "S256", state: "st", ...params }))
    url.searchParams.set(k, v);
  return url.href;
}

async function token(form: Record<string, string>) {
  const res = await fetch(`${service.baseUrl}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** A code for a freshly registered client, the person allowing; with its verifier. */
async function codeFor(scope = "agentline:read agentline:spend") {
  const { client_id } = await register();
  const verifier = randomBytes(32).toString("base64url");
  const landed = await person.authorize(authorizeUrl({ client_id, code_challenge: s256(verifier), scope, resource: mcpUrl }), who());
  expect(landed).toBeInstanceOf(URL);
  return { client_id, verifier, code: (landed as URL).searchParams.get("code")! };
}

const redeem = (c: { client_id: string; verifier: string; code: string }, verifier = c.verifier) =>
  token({ grant_type: "authorization_code", client_id: c.client_id, code: c.code, code_verifier: verifier, redirect_uri: callback.url, resource: mcpUrl });

const accessTokenRows = async () => (await service.core.db.select().from(oauthRecords).where(eq(oauthRecords.kind, "AccessToken"))).length;

/** The page a refused authorization request shows instead of sending the browser on. */
function refusedPage(at: PageAnswer | URL): PageAnswer {
  if (at instanceof URL) throw new Error(`the browser was sent to ${at.href}`);
  expect(at.status).toBe(400);
  return at;
}

describe("refusals at the authorization server", () => {
  it("refuses a wrong PKCE verifier with invalid_grant and mints nothing", async () => {
    const code = await codeFor();
    const before = await accessTokenRows();
    const wrong = await redeem(code, randomBytes(32).toString("base64url"));
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    expect(wrong.body.access_token).toBeUndefined();
    expect(await accessTokenRows()).toBe(before);
  });

  it("refuses a redirect_uri that was not registered on its own page, never redirecting to it", async () => {
    const { client_id } = await register();
    const verifier = randomBytes(32).toString("base64url");
    for (const redirect of ["https://attacker.example/callback", `${callback.url}/elsewhere`]) {
      const res = await fetch(authorizeUrl({ client_id, code_challenge: s256(verifier), redirect_uri: redirect }), { redirect: "manual" });
      expect(res.status, redirect).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(await res.text()).toContain("invalid_redirect_uri: redirect_uri did not match any of the client&#39;s registered redirect_uris");
    }
    // A loopback redirect URI on another port is the same one (RFC 8252): native clients take any free port.
    const otherPort = callback.url.replace(`:${callback.port}/`, ":1/");
    const res = await fetch(authorizeUrl({ client_id, code_challenge: s256(verifier), redirect_uri: otherPort }), { redirect: "manual" });
    expect(res.status).toBe(303);
  });

  it("refuses a token request for a code used before, and ends the grant the first use made", async () => {
    const code = await codeFor();
    const first = await redeem(code);
    expect(first.status).toBe(200);
    expect((await callTool(first.body.access_token, "list_agents")).status).toBe(200);
    const again = await redeem(code);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe("invalid_grant");
    expect(again.body.access_token).toBeUndefined();
    const after = await callTool(first.body.access_token, "list_agents");
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toMatch(/^Bearer realm="agentline", error="invalid_token", resource_metadata="/);
  });

  it("rotates refresh tokens, and a reused one is refused and revokes the whole chain", async () => {
    const code = await codeFor();
    const first = await redeem(code);
    const refreshed = await token({ grant_type: "refresh_token", client_id: code.client_id, refresh_token: first.body.refresh_token, resource: mcpUrl });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(first.body.refresh_token);
    expect((await callTool(refreshed.body.access_token, "list_agents")).status).toBe(200);

    const reused = await token({ grant_type: "refresh_token", client_id: code.client_id, refresh_token: first.body.refresh_token, resource: mcpUrl });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    // The chain: the newer refresh token and every access token of the grant are dead too.
    const newer = await token({ grant_type: "refresh_token", client_id: code.client_id, refresh_token: refreshed.body.refresh_token, resource: mcpUrl });
    expect(newer.body.error).toBe("invalid_grant");
    expect((await callTool(refreshed.body.access_token, "list_agents")).status).toBe(401);
    expect((await callTool(first.body.access_token, "list_agents")).status).toBe(401);
  });

  it("mints tokens for this service's /mcp only: another resource is invalid_target, and such a token is a 401 at /mcp", async () => {
    const { client_id } = await register();
    const verifier = randomBytes(32).toString("base64url");
    const landed = await person.authorize(authorizeUrl({ client_id, code_challenge: s256(verifier), resource: "https://elsewhere.example/mcp" }), who());
    expect(landed).toBeInstanceOf(URL);
    expect((landed as URL).searchParams.get("error")).toBe("invalid_target");
    expect((landed as URL).searchParams.get("code")).toBeNull();

    // A token of a live connection, minted by the same server, that differs only in its audience.
    const code = await codeFor();
    const good = await redeem(code);
    const stored = await (await authorizationServer(service.core)).AccessToken.find(good.body.access_token);
    const mint = async (audience: string) => {
      const provider = await authorizationServer(service.core);
      const resourceServer = new provider.ResourceServer(audience, { scope: "agentline:read", audience });
      return new provider.AccessToken({
        accountId: stored!.accountId,
        clientId: stored!.clientId,
        grantId: stored!.grantId,
        gty: "authorization_code",
        scope: "agentline:read",
        resourceServer,
      } as never).save();
    };
    expect((await callTool(await mint(mcpUrl), "list_agents")).status).toBe(200);
    const foreign = await callTool(await mint("https://elsewhere.example/mcp"), "list_agents");
    expect(foreign.status).toBe(401);
    expect(foreign.body.code).toBe("unauthorized");
  });
});

describe("refused client ID metadata documents", () => {
  let documents: Awaited<ReturnType<typeof startLoopbackHttps>>;
  const served: Record<string, (url: string) => { body: string; delayMs?: number }> = {};
  const fetched: string[] = [];

  beforeAll(async () => {
    documents = await startLoopbackHttps((req, res) => {
      fetched.push(req.url!);
      const answer = served[req.url!]?.(`${documents.url}${req.url}`);
      if (!answer) return void res.writeHead(404).end();
      setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(answer.body), answer.delayMs ?? 0).unref();
    });
  });
  afterAll(() => documents?.close());

  const document = (clientId: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ client_id: clientId, client_name: "Document client", redirect_uris: [callback.url], token_endpoint_auth_method: "none", ...extra });

  async function authorizeAs(clientId: string) {
    const verifier = randomBytes(32).toString("base64url");
    const started = Date.now();
    const page = refusedPage(await new FormBrowser(service.baseUrl).open(authorizeUrl({ client_id: clientId, code_challenge: s256(verifier) })));
    return { text: page.html.replace(/<[^>]+>/g, " ").replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c))), ms: Date.now() - started };
  }

  it("refuses a document larger than 5 KB", async () => {
    served["/big.json"] = (url) => ({ body: document(url, { padding: "x".repeat(6 * 1024) }) });
    const { text } = await authorizeAs(`${documents.url}/big.json`);
    expect(text).toContain("invalid_client");
    expect(text).toContain("is larger than 5 KB");
  });

  it("refuses a document that takes longer than 5 seconds", { timeout: 30_000 }, async () => {
    served["/slow.json"] = (url) => ({ body: document(url), delayMs: 7_000 });
    const { text, ms } = await authorizeAs(`${documents.url}/slow.json`);
    expect(text).toContain("did not answer in full within 5 s");
    expect(ms).toBeGreaterThanOrEqual(4_900);
    expect(ms).toBeLessThan(7_000);
  });

  it("refuses a document whose client_id is not its own URL", async () => {
    served["/impostor.json"] = () => ({ body: document("https://claude.ai/oauth/mcp-client-metadata") });
    const { text } = await authorizeAs(`${documents.url}/impostor.json`);
    expect(text).toContain("invalid_client_metadata");
    expect(text).toContain("client_id does not match");
  });

  it("does not fetch a client_id that is an http URL (only loopback https, in development)", async () => {
    const plain = createServer((req, res) => {
      fetched.push(`http:${req.url}`);
      res.writeHead(200, { "content-type": "application/json" }).end(document(`http://127.0.0.1:${(plain.address() as AddressInfo).port}/client.json`));
    });
    await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
    try {
      const { text } = await authorizeAs(`http://127.0.0.1:${(plain.address() as AddressInfo).port}/client.json`);
      expect(text).toContain("invalid_client");
      expect(fetched.filter((f) => f.startsWith("http:"))).toEqual([]);
    } finally {
      plain.close();
    }
  });

  it("stores nothing for a refused document", async () => {
    const clients = await service.core.db
      .select()
      .from(oauthRecords)
      .where(and(eq(oauthRecords.kind, "Client")));
    // Only the registered (RFC 7591) clients of the tests above are rows; no document client is.
    expect(clients.every((c) => (c.payload as { client_name?: string }).client_name === "Raw client")).toBe(true);
  });
});

describe("the SSRF guard on client ID metadata documents", () => {
  it("never fetches a document from a private or loopback address outside development", async () => {
    const strict = await startTestService();
    const hits: string[] = [];
    const host = await startLoopbackHttps((req, res) => {
      hits.push(req.url!);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    try {
      for (const clientId of [
        `${host.url}/client.json`,
        `https://localhost:${new URL(host.url).port}/client.json`,
        "https://10.0.0.1/client.json",
        "https://[::ffff:127.0.0.1]/client.json",
      ]) {
        const url = new URL(`${strict.baseUrl}/oauth/authorize`);
        for (const [k, v] of Object.entries({
          response_type: "code",
          client_id: clientId,
          redirect_uri: "http://127.0.0.1:1/callback",
          code_challenge: s256("v".repeat(43)),
          code_challenge_method: "S256",
        })) {
          url.searchParams.set(k, v);
        }
        const res = await fetch(url, { redirect: "manual" });
        expect(res.status, clientId).toBe(400);
        const page = (await res.text()).replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)));
        expect(page, clientId).toContain("invalid_client");
        expect(page, clientId).toContain("must not point at a private, loopback or link-local address");
      }
      expect(hits).toEqual([]);
    } finally {
      await host.close();
      await strict.stop();
    }
  });
});
