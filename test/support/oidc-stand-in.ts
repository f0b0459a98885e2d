import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type CryptoKey, exportJWK, generateKeyPair, SignJWT } from "jose";

/** What the stand-in gets wrong in the ID token it issues. */
export type Forgery = "none" | "wrong_key" | "wrong_aud" | "wrong_nonce" | "expired" | "no_id_token";

/** How the token endpoint misbehaves, beyond a 503. */
export type TokenFault = "none" | "drop" | "hang";

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string;
  subject: string;
}

/**
 * A small loopback OpenID Connect issuer for what a real provider cannot be made to do: issue a
 * forged ID token (signed with a key outside its JWKS, for another audience, with another
 * nonce, or expired). Otherwise it behaves: discovery, JWKS, an authorization endpoint that
 * answers at once (the user is the `login_hint`), and a token endpoint that checks the code,
 * the redirect URI and PKCE, and admits a public client (no secret, PKCE alone) or, with
 * `clientSecret` set, a confidential one. It can also be made to fail at the token endpoint.
 */
export class OidcStandIn {
  forgery: Forgery = "none";
  /** Requests the token endpoint received. */
  tokenRequests = 0;
  /** Requests for the discovery document. */
  discoveryRequests = 0;
  /** When set, the discovery document answers 503 (the provider is down before a sign-in starts). */
  discoveryDown = false;
  /** When set, the token endpoint answers 503 (the provider is down after the redirect). */
  tokenEndpointDown = false;
  /** When set, the token endpoint drops the connection or never answers. */
  tokenFault: TokenFault = "none";
  /** When set, the token endpoint gives this answer instead of tokens (an OAuth error, an HTML page). */
  tokenAnswer: { status: number; body: string; contentType?: string; headers?: Record<string, string> } | undefined = undefined;
  /** The token_endpoint_auth_methods_supported the discovery document lists (undefined: none listed). */
  authMethods: string[] | undefined = ["none"];
  /** When set, the client is confidential: the token endpoint wants this secret, by Basic or in the form. */
  clientSecret: string | undefined = undefined;
  /** How the last token request authenticated the client. */
  lastClientAuth: "client_secret_basic" | "client_secret_post" | "none" | undefined;
  /** Milliseconds the discovery document waits before answering 503 while discoveryDown. */
  discoveryDownDelayMs = 0;
  /** Extra claims for every ID token (an e-mail address, say). */
  extraClaims: Record<string, unknown> = {};
  private readonly codes = new Map<string, IssuedCode>();

  private constructor(
    private readonly server: Server,
    readonly issuer: string,
    private readonly signingKey: CryptoKey,
    private readonly outsiderKey: CryptoKey,
    private readonly publicJwk: Record<string, unknown>,
  ) {}

  static async start(): Promise<OidcStandIn> {
    const signing = await generateKeyPair("ES256", { extractable: true });
    const outsider = await generateKeyPair("ES256");
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const jwk = { ...(await exportJWK(signing.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
    const standIn = new OidcStandIn(server, issuer, signing.privateKey, outsider.privateKey, jwk);
    server.on("request", (req, res) => {
      standIn.handle(req, res).catch((error: unknown) => json(res, 500, { error: "server_error", error_description: String(error) }));
    });
    return standIn;
  }

  /** Opens the authorization URL (no login page: it answers at once) and returns the redirect to the callback. */
  async authorize(authorizeUrl: string): Promise<URL> {
    const res = await fetch(authorizeUrl, { redirect: "manual" });
    const location = res.headers.get("location");
    if (res.status !== 302 || !location) throw new Error(`the stand-in answered ${res.status}: ${await res.text()}`);
    return new URL(location);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url!, this.issuer);
    if (url.pathname === "/.well-known/openid-configuration") {
      this.discoveryRequests++;
      if (this.discoveryDown) {
        await new Promise((resolve) => setTimeout(resolve, this.discoveryDownDelayMs));
        return json(res, 503, { error: "temporarily_unavailable" });
      }
      return json(res, 200, {
        issuer: this.issuer,
        authorization_endpoint: `${this.issuer}/authorize`,
        token_endpoint: `${this.issuer}/token`,
        jwks_uri: `${this.issuer}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["ES256"],
        code_challenge_methods_supported: ["S256"],
        ...(this.authMethods ? { token_endpoint_auth_methods_supported: this.authMethods } : {}),
        authorization_response_iss_parameter_supported: true,
      });
    }
    if (url.pathname === "/jwks") return json(res, 200, { keys: [this.publicJwk] });
    if (url.pathname === "/authorize") return this.authorizeEndpoint(url, res);
    if (url.pathname === "/token" && req.method === "POST") return this.tokenEndpoint(req, res);
    json(res, 404, { error: "not_found" });
  }

  private authorizeEndpoint(url: URL, res: ServerResponse): void {
    const p = url.searchParams;
    if (p.get("response_type") !== "code" || p.get("code_challenge_method") !== "S256" || !p.get("code_challenge") || !p.get("nonce")) {
      return json(res, 400, { error: "invalid_request" });
    }
    const code = randomBytes(16).toString("hex");
    this.codes.set(code, {
      clientId: p.get("client_id")!,
      redirectUri: p.get("redirect_uri")!,
      challenge: p.get("code_challenge")!,
      nonce: p.get("nonce")!,
      subject: p.get("login_hint") ?? "agent-default",
    });
    const back = new URL(p.get("redirect_uri")!);
    back.search = new URLSearchParams({ code, state: p.get("state")!, iss: this.issuer }).toString();
    res.writeHead(302, { location: back.href }).end();
  }

  private async tokenEndpoint(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.tokenRequests++;
    if (this.tokenEndpointDown) return json(res, 503, { error: "temporarily_unavailable" });
    if (this.tokenFault === "drop") return void req.socket.destroy();
    if (this.tokenFault === "hang") return;
    if (this.tokenAnswer) {
      const { status, body, contentType = "application/json", headers = {} } = this.tokenAnswer;
      return void res.writeHead(status, { ...headers, "content-type": contentType }).end(body);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString());
    const issued = this.codes.get(form.get("code") ?? "");
    this.codes.delete(form.get("code") ?? "");
    const verifier = form.get("code_verifier") ?? "";
    const pkceHolds = issued && createHash("sha256").update(verifier).digest("base64url") === issued.challenge;
    const basic = req.headers.authorization?.startsWith("Basic ") ? Buffer.from(req.headers.authorization.slice(6), "base64").toString() : undefined;
    this.lastClientAuth = basic !== undefined ? "client_secret_basic" : form.has("client_secret") ? "client_secret_post" : "none";
    const clientHolds =
      this.clientSecret === undefined
        ? this.lastClientAuth === "none" && form.get("client_id") === issued?.clientId
        : basic !== undefined
          ? basic
              .split(":")
              .map((part) => decodeURIComponent(part.replace(/\+/g, " ")))
              .join(":") === `${issued?.clientId}:${this.clientSecret}`
          : form.get("client_secret") === this.clientSecret && form.get("client_id") === issued?.clientId;
    if (form.get("grant_type") !== "authorization_code" || !issued || form.get("redirect_uri") !== issued.redirectUri || !pkceHolds || !clientHolds) {
      return json(res, 400, { error: "invalid_grant", error_description: "code, redirect_uri, PKCE or client authentication did not check out" });
    }
    const now = Math.floor(Date.now() / 1000);
    const expired = this.forgery === "expired";
    const idToken = await new SignJWT({ ...this.extraClaims, nonce: this.forgery === "wrong_nonce" ? "not-the-nonce" : issued.nonce })
      .setProtectedHeader({ alg: "ES256", kid: "k1", typ: "JWT" })
      .setIssuer(this.issuer)
      .setSubject(issued.subject)
      .setAudience(this.forgery === "wrong_aud" ? "another-client" : issued.clientId)
      .setIssuedAt(expired ? now - 3600 : now)
      .setExpirationTime(expired ? now - 1800 : now + 300)
      .sign(this.forgery === "wrong_key" ? this.outsiderKey : this.signingKey);
    const tokens = { access_token: randomBytes(16).toString("hex"), token_type: "Bearer", expires_in: 300 };
    json(res, 200, this.forgery === "no_id_token" ? tokens : { ...tokens, id_token: idToken });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" }).end(JSON.stringify(body));
}
