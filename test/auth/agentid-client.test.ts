import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { AgentIdClient, type AuthorizationRequest } from "../../core/auth/agentid/oidc-client.js";
import type { AgentIdSettings } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { OidcStandIn } from "../support/oidc-stand-in.js";

// The relying party on its own, against the loopback stand-in issuer: how it authenticates to the
// token endpoint, and what each way a callback can end becomes.
let issuer: OidcStandIn;
const REDIRECT_URI = "http://127.0.0.1:9/v1/auth/agentid/callback";
const HOUR_MS = 60 * 60_000;

beforeAll(async () => {
  issuer = await OidcStandIn.start();
});
afterAll(async () => {
  await issuer?.close();
});
afterEach(() => {
  vi.restoreAllMocks();
  issuer.forgery = "none";
  issuer.tokenAnswer = undefined;
  issuer.tokenFault = "none";
  issuer.tokenEndpointDown = false;
  issuer.discoveryDown = false;
  issuer.discoveryDownDelayMs = 0;
  issuer.authMethods = ["none"];
  issuer.clientSecret = undefined;
});

const newClient = (settings: Partial<AgentIdSettings> = {}, logger = createLogger("silent")) =>
  new AgentIdClient({ issuer: issuer.issuer, clientId: "agentline-direct", clientSecret: undefined, sessionTtlS: 600, ...settings }, logger);

/** A silent logger whose warnings and errors the test reads. */
function watchedLogger() {
  const logger = createLogger("silent");
  return { logger, warn: vi.spyOn(logger, "warn"), error: vi.spyOn(logger, "error") };
}

const checksOf = (request: AuthorizationRequest) => ({ state: request.state, nonce: request.nonce, codeVerifier: request.codeVerifier });

/** Authorizes at the stand-in as `subject` and redeems the code it sends back. */
async function signIn(client: AgentIdClient, subject = "agent-direct") {
  const request = await client.authorizationRequest(REDIRECT_URI, subject);
  return client.redeem(await issuer.authorize(request.authorizeUrl), checksOf(request));
}

/** A callback carrying the provider's error parameters for a request just made. */
async function errorCallback(client: AgentIdClient, error: Record<string, string>) {
  const request = await client.authorizationRequest(REDIRECT_URI, undefined);
  const callback = new URL(REDIRECT_URI);
  callback.search = new URLSearchParams({ state: request.state, iss: issuer.issuer, ...error }).toString();
  return client.redeem(callback, checksOf(request));
}

describe("AgentID client authentication at the token endpoint", () => {
  it.each([
    ["lists no methods (RFC 8414 default)", undefined, "client_secret_basic"],
    ["lists client_secret_basic among others", ["client_secret_post", "client_secret_basic"], "client_secret_basic"],
    ["lists only client_secret_post", ["client_secret_post"], "client_secret_post"],
  ])("a confidential client, at a provider that %s, authenticates accordingly", async (_label, methods, expected) => {
    issuer.authMethods = methods;
    issuer.clientSecret = "a-direct-secret";
    expect(await signIn(newClient({ clientSecret: "a-direct-secret" }), "agent-confidential")).toEqual({
      kind: "signed_in",
      issuer: issuer.issuer,
      subject: "agent-confidential",
    });
    expect(issuer.lastClientAuth).toBe(expected);
  });
});

describe("AgentID callback outcomes, as Redemptions", () => {
  it("quotes the provider's error in the authorization response, cut to 64 and 200 characters", async () => {
    const client = newClient();
    expect(await errorCallback(client, { error: "server_error" })).toEqual({ kind: "failed", reason: "The identity provider answered server_error." });
    expect(await errorCallback(client, { error: "access_denied" })).toEqual({ kind: "denied", reason: "The sign-in was refused at the identity provider." });
    expect(await errorCallback(client, { error: "access_denied", error_description: `The user said no${"!".repeat(300)}` })).toEqual({
      kind: "denied",
      reason: `The sign-in was refused at the identity provider: The user said no${"!".repeat(184)}.`,
    });
    const [code, description] = ["e".repeat(100), "d".repeat(300)];
    expect(await errorCallback(client, { error: code, error_description: description })).toEqual({
      kind: "failed",
      reason: `The identity provider answered ${"e".repeat(64)}: ${"d".repeat(200)}.`,
    });
  });

  it("quotes the token endpoint's OAuth error, cut to 64 and 200 characters", async () => {
    const client = newClient();
    issuer.tokenAnswer = { status: 400, body: JSON.stringify({ error: "invalid_grant" }) };
    expect(await signIn(client)).toEqual({ kind: "failed", reason: "The identity provider refused the code: invalid_grant." });
    issuer.tokenAnswer = { status: 400, body: JSON.stringify({ error: "e".repeat(100), error_description: "d".repeat(300) }) };
    expect(await signIn(client)).toEqual({ kind: "failed", reason: `The identity provider refused the code: ${"e".repeat(64)} (${"d".repeat(200)}).` });
  });

  it("counts any 5xx from the token endpoint, OAuth error or not, as the provider unavailable", async () => {
    const client = newClient();
    issuer.tokenAnswer = { status: 500, body: JSON.stringify({ error: "server_error" }) };
    expect(await signIn(client)).toEqual({ kind: "unavailable", reason: "The identity provider failed (HTTP 500)." });
    issuer.tokenAnswer = { status: 502, body: "<html>Bad gateway</html>", contentType: "text/html" };
    expect(await signIn(client)).toEqual({ kind: "unavailable", reason: "The identity provider failed (HTTP 502)." });
  });

  it("counts a dropped connection to the token endpoint as the provider unreachable, and logs it as a warning", async () => {
    issuer.tokenFault = "drop";
    const { logger, warn, error } = watchedLogger();
    expect(await signIn(newClient({}, logger))).toEqual({ kind: "unavailable", reason: "The identity provider could not be reached." });
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ err: expect.any(Error) }), "AgentID provider unreachable during a callback");
    expect(error).not.toHaveBeenCalled();
  });

  it("answers a failure of its own fetch that is not the network as failed, not as the provider unreachable", async () => {
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) =>
      String(input instanceof Request ? input.url : input).endsWith("/token") ? Promise.reject(new TypeError("Invalid header value")) : realFetch(input, init),
    );
    const { logger, warn, error } = watchedLogger();
    expect(await signIn(newClient({}, logger))).toEqual({ kind: "failed", reason: "The identity provider's answer could not be processed." });
    expect(error).toHaveBeenCalledWith(expect.objectContaining({ err: expect.any(TypeError) }), "AgentID callback failed unexpectedly");
    expect(warn).not.toHaveBeenCalled();
  });

  it("refuses a token response without an ID token", async () => {
    issuer.forgery = "no_id_token";
    const result = await signIn(newClient());
    expect(result).toEqual({ kind: "failed", reason: expect.stringMatching(/^The identity provider's answer did not check out: .*"id_token"/) });
  });

  it("answers an answer it cannot place (a 401 challenge) as failed, without claiming a check", async () => {
    issuer.tokenAnswer = { status: 401, body: "", contentType: "text/plain", headers: { "www-authenticate": 'Bearer error="invalid_client"' } };
    const { logger, warn, error } = watchedLogger();
    expect(await signIn(newClient({}, logger))).toEqual({ kind: "failed", reason: "The identity provider's answer could not be processed." });
    expect(error).toHaveBeenCalledWith(expect.objectContaining({ err: expect.anything() }), "AgentID callback failed unexpectedly");
    expect(warn).not.toHaveBeenCalled();
  });
});

describe("AgentID discovery", () => {
  it("answers a callback unavailable, with the 503's own words, when discovery fails at the callback, and logs the issuer", async () => {
    const { logger, error } = watchedLogger();
    const client = newClient({}, logger);
    issuer.discoveryDown = true;
    const callback = new URL(`${REDIRECT_URI}?state=s&code=c&iss=${encodeURIComponent(issuer.issuer)}`);
    expect(await client.redeem(callback, { state: "s", nonce: "n", codeVerifier: "v".repeat(43) })).toEqual({
      kind: "unavailable",
      reason: "The AgentID identity provider cannot be reached right now. Try again shortly, or sign in with an e-mail code.",
    });
    expect(error).toHaveBeenCalledWith(expect.objectContaining({ issuer: issuer.issuer }), "AgentID discovery failed");
  });

  it("keeps the discovery document for exactly an hour", async () => {
    const t0 = Date.now();
    const clock = vi.spyOn(Date, "now").mockReturnValue(t0);
    const client = newClient();
    const reads = issuer.discoveryRequests;
    await client.authorizationRequest(REDIRECT_URI, undefined);
    clock.mockReturnValue(t0 + HOUR_MS);
    await client.authorizationRequest(REDIRECT_URI, undefined);
    expect(issuer.discoveryRequests).toBe(reads + 1);
    clock.mockReturnValue(t0 + HOUR_MS + 1);
    await client.authorizationRequest(REDIRECT_URI, undefined);
    expect(issuer.discoveryRequests).toBe(reads + 2);
  });

  it("a failed read forgets only itself: a newer good read made meanwhile is kept", async () => {
    const t0 = Date.now();
    const clock = vi.spyOn(Date, "now").mockReturnValue(t0);
    const client = newClient();
    const reads = issuer.discoveryRequests;
    issuer.discoveryDown = true;
    issuer.discoveryDownDelayMs = 300;
    const failing = client.authorizationRequest(REDIRECT_URI, undefined);
    await vi.waitFor(() => expect(issuer.discoveryRequests).toBe(reads + 1));
    issuer.discoveryDown = false;
    clock.mockReturnValue(t0 + HOUR_MS + 1);
    await client.authorizationRequest(REDIRECT_URI, undefined);
    await expect(failing).rejects.toMatchObject({ code: "service_unavailable" });
    await client.authorizationRequest(REDIRECT_URI, undefined);
    expect(issuer.discoveryRequests).toBe(reads + 2);
  });
});
