import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auth, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Locator, Page } from "playwright-core";
import { expect } from "vitest";
import type { startSmtpServer } from "./smtp.js";

/**
 * An MCP client's OAuth side as the SDK expects it (`OAuthClientProvider`), keeping everything
 * in memory, as a client app would keep it in its own storage. With `clientMetadataUrl` it
 * identifies itself with a client ID metadata document; without, it registers (RFC 7591).
 */
export class TestOAuthClient implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  /** The last authorization URL the SDK sent the "browser" to. */
  authorizationUrl: URL | undefined;
  readonly stateValue = randomBytes(16).toString("base64url");

  constructor(
    readonly redirectUrl: string,
    readonly options: { clientName?: string; scope?: string; clientMetadataUrl?: string } = {},
  ) {}

  get clientMetadataUrl(): string | undefined {
    return this.options.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName ?? "Test MCP client",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(this.options.scope ? { scope: this.options.scope } : {}),
    };
  }

  state(): string {
    return this.stateValue;
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** A loopback HTTP server standing for the client's redirect URI: it records each callback. */
export async function startCallbackServer() {
  const received: URL[] = [];
  const waiters: Array<(url: URL) => void> = [];
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    res.writeHead(200, { "content-type": "text/plain" }).end("You can close this page.");
    received.push(url);
    waiters.splice(0).forEach((wake) => wake(url));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/callback`,
    received,
    /** The next callback (or one that came since the last call). */
    next(): Promise<URL> {
      const seen = received.length;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no callback within 30 s")), 30_000);
        const check = () => {
          if (received.length > seen) {
            clearTimeout(timer);
            resolve(received[received.length - 1]!);
          } else waiters.push(check);
        };
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Smtp = Awaited<ReturnType<typeof startSmtpServer>>;

/**
 * Drives the sign-in and consent pages in the browser as a person would: the e-mail address, the
 * code from the mail, then Allow (optionally limiting the grant to one agent) or Deny. Returns
 * once the browser has been sent on to the client's redirect URI.
 */
export async function signInAndDecide(
  page: Page,
  authorizationUrl: string,
  options: { email: string; smtp: Smtp; decision?: "Allow" | "Deny"; agentId?: string; signedIn?: boolean },
): Promise<void> {
  await page.goto(authorizationUrl);
  if (!options.signedIn) {
    await page.locator("input[type=email]").fill(options.email);
    await page.getByRole("button", { name: "Send code" }).click();
    await shown(page, page.locator("input[autocomplete=one-time-code]"));
    await page.locator("input[autocomplete=one-time-code]").fill(await options.smtp.codeFor(options.email));
    await page.getByRole("button", { name: "Sign in" }).click();
  }
  await shown(page, page.getByRole("button", { name: "Allow" }));
  if (options.agentId) await page.locator("select[name=agent_id]").selectOption(options.agentId);
  await page.getByRole("button", { name: options.decision ?? "Allow" }).click();
}

/** Waits for a part of the page; failing, says what the page showed instead. */
async function shown(page: Page, locator: Locator): Promise<void> {
  try {
    await locator.waitFor({ timeout: 15_000 });
  } catch (error) {
    throw new Error(
      `${String(error)}\nThe page (${page.url()}) showed: ${await page
        .locator("body")
        .textContent()
        .catch(() => "nothing")}`,
    );
  }
}

/** The SDK client connected to /mcp with the provider's tokens (refreshing them as the SDK does). */
export async function connectWithOAuth(serverUrl: string, provider: OAuthClientProvider): Promise<Client> {
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
  return client;
}

/**
 * The whole sign-in as an MCP client does it: the SDK's auth() discovers the authorization
 * server from /mcp, registers (or names its metadata document), and sends the browser to the
 * authorization URL; the person signs in and allows in Chromium; auth() then redeems the code.
 * Returns the callback the browser reached (to look at state and iss).
 */
export async function authorizeInBrowser(
  serverUrl: string,
  provider: TestOAuthClient,
  page: Page,
  callback: Awaited<ReturnType<typeof startCallbackServer>>,
  person: { email: string; smtp: Smtp; agentId?: string; signedIn?: boolean },
  scope?: string,
): Promise<URL> {
  expect(await auth(provider, { serverUrl, ...(scope ? { scope } : {}) })).toBe("REDIRECT");
  const arrived = callback.next();
  await signInAndDecide(page, provider.authorizationUrl!.href, person);
  const url = await arrived;
  const code = url.searchParams.get("code");
  if (!code) throw new Error(`no code in the callback: ${url.href}`);
  expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe("AUTHORIZED");
  return url;
}

/** PKCE's S256 challenge of a verifier. */
export const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

/**
 * An https server on loopback with a throwaway self-signed certificate, for client ID metadata
 * documents (which must be https). The service fetches loopback documents only with
 * ALLOW_PRIVATE_WEBHOOKS=1, and then does not check their certificate.
 */
export async function startLoopbackHttps(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const dir = mkdtempSync(join(tmpdir(), "agentline-tls-"));
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-days",
      "1",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  const server = createHttpsServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }, handler);
  rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface PageAnswer {
  status: number;
  url: string;
  html: string;
}

/**
 * A person's browser without JavaScript, for the many sign-ins of the refusal tests (Chromium
 * drives the pages in the connect tests): it keeps cookies, follows redirects on the service,
 * and stops at the first redirect that leaves it (the client's callback), which it returns.
 */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();

  /** `headers` go with every request (a proxy's X-Forwarded-For, say). */
  constructor(
    readonly origin: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  /** The Cookie header this browser sends. */
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<PageAnswer | URL> {
    let next: { url: string; method: string; body?: string } = {
      url,
      method: init.method ?? "GET",
      ...(init.form ? { body: new URLSearchParams(init.form).toString() } : {}),
    };
    for (let hops = 0; hops < 20; hops++) {
      if (new URL(next.url).origin !== this.origin) return new URL(next.url);
      const headers: Record<string, string> = { ...this.headers, cookie: this.cookieHeader() };
      if (next.body !== undefined) Object.assign(headers, { "content-type": "application/x-www-form-urlencoded", origin: this.origin });
      const res = await fetch(next.url, { method: next.method, headers, body: next.body, redirect: "manual" });
      for (const cookie of res.headers.getSetCookie()) {
        const [pair] = cookie.split(";");
        const [name, ...value] = pair!.split("=");
        if (/expires=Thu, 01 Jan 1970/i.test(cookie) || value.join("=") === "") this.cookies.delete(name!.trim());
        else this.cookies.set(name!.trim(), value.join("="));
      }
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location) {
        next = { url: new URL(location, next.url).href, method: "GET" };
        continue;
      }
      return { status: res.status, url: next.url, html: await res.text() };
    }
    throw new Error("too many redirects");
  }

  /** Opens a URL; a page of the service, or the URL it was sent off to. */
  open(url: string): Promise<PageAnswer | URL> {
    return this.request(url);
  }

  /** Submits the page's form whose action ends with `step`, with its hidden fields and `fields`. */
  async submit(page: PageAnswer, step: string, fields: Record<string, string>): Promise<PageAnswer | URL> {
    const form = [...page.html.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)].find((m) => m[1]!.endsWith(`/${step}`));
    if (!form)
      throw new Error(
        `no ${step} form on the page ${page.url}: ${page.html
          .replace(/<[^>]+>/g, " ")
          .replace(/\s+/g, " ")
          .slice(0, 500)}`,
      );
    const hidden = Object.fromEntries(
      [...form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, decodeEntities(m[2]!)]),
    );
    return this.request(new URL(decodeEntities(form[1]!), page.url).href, { method: "POST", form: { ...hidden, ...fields } });
  }

  /**
   * Signs in (unless this browser already is) and decides on the consent page; returns where the
   * browser was sent (the client's callback), or the page it stopped on.
   */
  async authorize(url: string, person: { email: string; smtp: Smtp; decision?: "Allow" | "Deny"; agentId?: string }): Promise<PageAnswer | URL> {
    let at = await this.open(url);
    if (at instanceof URL) return at;
    if (at.html.includes('type="email"')) {
      at = await this.submit(at, "email", { email: person.email });
      if (at instanceof URL || at.status !== 200) return at;
      at = await this.submit(at, "code", { email: person.email, code: await person.smtp.codeFor(person.email) });
      if (at instanceof URL) return at;
    }
    const decision = person.decision ?? "Allow";
    return this.submit(at, "consent", { [decision]: decision.toLowerCase(), ...(person.agentId ? { agent_id: person.agentId } : {}) });
  }
}

const decodeEntities = (text: string) => text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));

/**
 * An access and refresh token for `provider`, the person allowing in a FormBrowser: the SDK's
 * auth() registers (or names its document), sends the person to authorize, redeems the code.
 */
export async function tokensFor(
  serverUrl: string,
  provider: TestOAuthClient,
  person: FormBrowser,
  who: { email: string; smtp: Smtp; agentId?: string },
  scope?: string,
) {
  expect(await auth(provider, { serverUrl, ...(scope ? { scope } : {}) })).toBe("REDIRECT");
  const landed = await person.authorize(provider.authorizationUrl!.href, who);
  if (!(landed instanceof URL))
    throw new Error(
      `the sign-in stopped at ${landed.url} (${landed.status}): ${landed.html
        .replace(/<[^>]+>/g, " ")
        .replace(/\s+/g, " ")
        .slice(0, 400)}`,
    );
  const code = landed.searchParams.get("code");
  if (!code) throw new Error(`no code: ${landed.href}`);
  expect(await auth(provider, { serverUrl, authorizationCode: code })).toBe("AUTHORIZED");
  return provider.saved!;
}
