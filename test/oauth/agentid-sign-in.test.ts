import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FormBrowser, type PageAnswer, s256, startCallbackServer } from "../support/oauth.js";
import { OidcStandIn } from "../support/oidc-stand-in.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let standIn: OidcStandIn;
let callback: Awaited<ReturnType<typeof startCallbackServer>>;

beforeAll(async () => {
  [standIn, callback] = await Promise.all([OidcStandIn.start(), startCallbackServer()]);
  service = await startTestService({ env: { AGENTID_ISSUER: standIn.issuer, AGENTID_CLIENT_ID: "agentline-test" } });
});
afterAll(async () => {
  await service?.stop();
  await standIn?.close();
  await callback?.close();
});

describe("signing in with AgentID on the OAuth sign-in page", () => {
  it("offers AgentID where it is configured, signs the agent in, and goes on to the consent for its account", async () => {
    const registered = await fetch(`${service.baseUrl}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Agent's client", redirect_uris: [callback.url], token_endpoint_auth_method: "none" }),
    });
    const { client_id } = (await registered.json()) as { client_id: string };
    const authorize = new URL(`${service.baseUrl}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      response_type: "code",
      client_id,
      redirect_uri: callback.url,
      code_challenge: s256(randomBytes(32).toString("base64url")),
      code_challenge_method: "S256",
      state: "a1",
    })) {
      authorize.searchParams.set(k, v);
    }
    const person = new FormBrowser(service.baseUrl);
    const signIn = (await person.open(authorize.href)) as PageAnswer;
    expect(signIn.html).toContain("Sign in with AgentID");

    // The identity provider's page, then its redirect to the service's callback, which sends the browser back here.
    const atProvider = await person.submit(signIn, "agentid", {});
    expect(atProvider).toBeInstanceOf(URL);
    expect((atProvider as URL).origin).toBe(standIn.issuer);
    const backAtService = await standIn.authorize((atProvider as URL).href);
    const consent = (await person.open(backAtService.href)) as PageAnswer;
    expect(consent.status).toBe(200);
    expect(consent.html).toContain("Connect Agent&#39;s client?");
    // The account is the identity's (keyed on issuer and subject), made on this first sign-in: no key was minted for it.
    const account = /the agentline account <strong>([^<]+)<\/strong>/.exec(consent.html)![1]!;
    expect(account).toMatch(/^acct_/);

    const landed = await person.submit(consent, "consent", { Allow: "allow" });
    expect((landed as URL).searchParams.get("code")).toBeTruthy();
    // The AgentID sign-in's session is used up: its callback cannot sign anyone in again.
    const again = (await new FormBrowser(service.baseUrl).open(backAtService.href)) as PageAnswer;
    expect(again.status).toBe(400);
  });

  it("offers no AgentID where it is not configured", async () => {
    const plain = await startTestService();
    try {
      const registered = await fetch(`${plain.baseUrl}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [callback.url], token_endpoint_auth_method: "none" }),
      });
      const { client_id } = (await registered.json()) as { client_id: string };
      const url = `${plain.baseUrl}/oauth/authorize?response_type=code&client_id=${client_id}&redirect_uri=${encodeURIComponent(callback.url)}&code_challenge=${s256("x".repeat(43))}&code_challenge_method=S256`;
      const page = (await new FormBrowser(plain.baseUrl).open(url)) as PageAnswer;
      expect(page.html).toContain('type="email"');
      expect(page.html).not.toContain("AgentID");
    } finally {
      await plain.stop();
    }
  });
});
