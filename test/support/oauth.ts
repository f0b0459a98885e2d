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
    throw new Error(`${String(error)}\nThe page (${page.url()}) showed: ${await page.locator("body").innerText().catch(() => "nothing")}`);
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
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
    "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
  ], { stdio: "ignore" });
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
