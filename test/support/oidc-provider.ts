import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";

/** The login_hint with which the test user refuses the sign-in at the provider. */
export const REFUSING_USER = "refuses";

/**
 * A real OpenID Connect provider (`oidc-provider`) on loopback, the way AgentID is one: ES256 ID
 * tokens, PKCE, `iss` in the authorization response. Login and consent are completed by code,
 * through the provider's interaction API: the user is whoever the `login_hint` names (so a
 * test picks the `sub`), and the `REFUSING_USER` refuses with access_denied.
 */
export class TestOidcProvider {
  /** Requests the token endpoint received. */
  tokenRequests = 0;
  private provider!: Provider;

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
  ) {}

  /** Listens first (the issuer is its URL); `register` adds the client once the service's callback URL is known. */
  static async start(): Promise<TestOidcProvider> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const provider = new TestOidcProvider(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on("request", (req, res) => provider.handle(req, res));
    return provider;
  }

  async register(client: { clientId: string; clientSecret?: string; redirectUri: string }): Promise<void> {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: "test-es256", alg: "ES256", use: "sig" };
    this.provider = new Provider(this.issuer, {
      clients: [
        {
          client_id: client.clientId,
          ...(client.clientSecret ? { client_secret: client.clientSecret } : { token_endpoint_auth_method: "none" }),
          redirect_uris: [client.redirectUri],
          grant_types: ["authorization_code"],
          response_types: ["code"],
          id_token_signed_response_alg: "ES256",
        },
      ],
      jwks: { keys: [jwk] },
      cookies: { keys: ["test-cookie-key-0123456789abcdef"] },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
      ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 300, IdToken: 300, AuthorizationCode: 60 },
      // Keep the console quiet: errors reach the test through the redirect.
      renderError: (ctx, out) => {
        ctx.type = "json";
        ctx.body = out;
      },
    });
    this.provider.on("server_error", (_ctx, error) => console.error("oidc-provider server_error", error));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.url?.startsWith("/token")) this.tokenRequests++;
    if (req.url?.startsWith("/interaction/")) {
      this.interact(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    void this.provider.callback()(req, res);
  }

  /** Completes whichever prompt the provider asks for, as the user named by login_hint. */
  private async interact(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const details = await this.provider.interactionDetails(req, res);
    const user = String(details.params.login_hint ?? "agent-default");
    if (user === REFUSING_USER) {
      await this.provider.interactionFinished(req, res, { error: "access_denied", error_description: "The user said no" }, { mergeWithLastSubmission: false });
      return;
    }
    if (details.prompt.name === "login") {
      await this.provider.interactionFinished(req, res, { login: { accountId: user } }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = new this.provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
    const missing = details.prompt.details.missingOIDCScope as string[] | undefined;
    if (missing) grant.addOIDCScope(missing.join(" "));
    await this.provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
  }

  /**
   * Follows the authorization URL through login and consent, as a browser would (cookies
   * included), and returns the redirect to the service's callback without opening it.
   */
  async authorize(authorizeUrl: string, callbackPrefix: string): Promise<URL> {
    const cookies = new Map<string, string>();
    let url = new URL(authorizeUrl);
    for (let hop = 0; hop < 10; hop++) {
      const res = await fetch(url, { redirect: "manual", headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") } });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(";");
        const eq = pair!.indexOf("=");
        cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
      }
      const location = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || !location) throw new Error(`the provider answered ${res.status} at ${url.pathname}: ${await res.text()}`);
      await res.arrayBuffer();
      url = new URL(location, url);
      if (url.href.startsWith(callbackPrefix)) return url;
    }
    throw new Error("too many redirects at the provider");
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
