import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { FormBrowser, type PageAnswer, s256, startCallbackServer } from "../support/oauth.js";
import { startTestService, type TestService } from "../support/service.js";
import { startSmtpServer } from "../support/smtp.js";

let service: TestService;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let callback: Awaited<ReturnType<typeof startCallbackServer>>;
let clientId: string;

// Behind a proxy, as in production: each test's "person" comes from an address of its own, so
// the per-address sign-in limits of one test do not spill into the next.
beforeAll(async () => {
  smtp = await startSmtpServer();
  [service, callback] = await Promise.all([startTestService({ env: { SMTP_URL: smtp.url, TRUST_PROXY: "loopback" } }), startCallbackServer()]);
  const res = await fetch(`${service.baseUrl}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "Page test client", redirect_uris: [callback.url], token_endpoint_auth_method: "none" }),
  });
  clientId = ((await res.json()) as { client_id: string }).client_id;
});
afterAll(async () => {
  await callback?.close();
  await service?.stop();
  await smtp?.close();
});

function authorizeUrl() {
  const url = new URL(`${service.baseUrl}/oauth/authorize`);
  const verifier = randomBytes(32).toString("base64url");
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: clientId,
    redirect_uri: callback.url,
    code_challenge: s256(verifier),
    code_challenge_method: "S256",
    state: "s1",
  })) {
    url.searchParams.set(k, v);
  }
  return url.href;
}

const text = (page: PageAnswer | URL) => {
  if (page instanceof URL) throw new Error(`sent to ${page.href}`);
  return page.html
    .replace(/<[^>]+>/g, " ")
    .replace(/&#(\d+);/g, (_, c: string) => String.fromCharCode(Number(c)))
    .replace(/\s+/g, " ");
};

/** A person's browser coming from its own address (X-Forwarded-For, through the trusted proxy). */
const personAt = (address: string) => new FormBrowser(service.baseUrl, { "x-forwarded-for": address });

describe("the sign-in and consent pages", () => {
  it("are plain forms: an e-mail field, a one-time-code field, and Allow and Deny buttons", async () => {
    const account = await createAccount(service.core);
    const person = personAt("198.51.100.1");
    const signIn = (await person.open(authorizeUrl())) as PageAnswer;
    expect(signIn.status).toBe(200);
    expect(signIn.html).toMatch(/<input id="email" type="email" name="email"/);
    expect(signIn.html).not.toMatch(/<script|src="http/);
    const code = (await person.submit(signIn, "email", { email: account.email })) as PageAnswer;
    expect(code.html).toMatch(/autocomplete="one-time-code"/);
    const consent = (await person.submit(code, "code", { email: account.email, code: await smtp.codeFor(account.email) })) as PageAnswer;
    const shown = text(consent);
    expect(shown).toContain("Connect Page test client?");
    expect(shown).toContain(account.email);
    expect(shown).toContain(`127.0.0.1:${callback.port}`);
    for (const scope of ["agentline:read", "agentline:write", "agentline:spend"]) expect(shown).toContain(scope);
    expect(consent.html).toMatch(/<button type="submit" name="Allow" value="allow">Allow<\/button>/);
    expect(consent.html).toMatch(/<button type="submit" name="Deny" value="deny">Deny<\/button>/);
  });

  it("sends Deny back to the client as access_denied, with state and iss, and grants nothing", async () => {
    const account = await createAccount(service.core);
    const landed = await personAt("198.51.100.2").authorize(authorizeUrl(), { email: account.email, smtp, decision: "Deny" });
    expect(landed).toBeInstanceOf(URL);
    const url = landed as URL;
    expect(url.searchParams.get("error")).toBe("access_denied");
    expect(url.searchParams.get("code")).toBeNull();
    expect(url.searchParams.get("state")).toBe("s1");
    expect(url.searchParams.get("iss")).toBe(service.baseUrl);
    const listed = await fetch(`${service.baseUrl}/v1/auth/connections`, { headers: { authorization: `Bearer ${account.apiKey}` } });
    expect(((await listed.json()) as { data: unknown[] }).data).toEqual([]);
  });

  it("holds the e-mail code limits: 3 codes per address, 5 per IP address, per 10 minutes", async () => {
    const person = personAt("198.51.100.3");
    const start = (await person.open(authorizeUrl())) as PageAnswer;
    const email = `limits-${randomBytes(3).toString("hex")}@example.com`;
    for (let i = 0; i < 3; i++) expect(((await person.submit(start, "email", { email })) as PageAnswer).status).toBe(200);
    const fourth = (await person.submit(start, "email", { email })) as PageAnswer;
    expect(fourth.status).toBe(429);
    expect(text(fourth)).toContain("Too many sign-in codes for this address");
    // Two more addresses from the same IP make five; the sixth is refused for the IP.
    for (const n of [1, 2]) expect(((await person.submit(start, "email", { email: `${n}-${email}` })) as PageAnswer).status).toBe(200);
    const sixth = (await person.submit(start, "email", { email: `3-${email}` })) as PageAnswer;
    expect(sixth.status).toBe(429);
    expect(text(sixth)).toContain("Too many sign-in codes from this IP address");
    expect(smtp.mails.filter((m) => m.to.includes(`3-${email}`))).toEqual([]);
  });

  it("refuses a wrong code and a form not posted from the sign-in's own page", async () => {
    const account = await createAccount(service.core);
    const person = personAt("198.51.100.4");
    const start = (await person.open(authorizeUrl())) as PageAnswer;
    const codePage = (await person.submit(start, "email", { email: account.email })) as PageAnswer;
    const right = await smtp.codeFor(account.email);
    const wrong = (await person.submit(codePage, "code", { email: account.email, code: right === "000000" ? "111111" : "000000" })) as PageAnswer;
    expect(wrong.status).toBe(400);
    expect(text(wrong)).toContain("That code is wrong or has expired");
    // Another site's form: the browser sends the cookies (SameSite=Lax does not stop a top-level POST
    // everywhere), but not the form's token, and names its own Origin.
    const action = /action="([^"]+\/code)"/.exec(codePage.html)![1]!;
    const forged = await fetch(new URL(action, service.baseUrl), {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "https://attacker.example",
        cookie: person.cookieHeader(),
        "x-forwarded-for": "198.51.100.4",
      },
      body: new URLSearchParams({ email: account.email, code: await smtp.codeFor(account.email) }).toString(),
      redirect: "manual",
    });
    expect(forged.status).toBe(403);
    // The code was not spent by the forgery: the person's own form still signs in.
    const consent = await person.submit(codePage, "code", { email: account.email, code: await smtp.codeFor(account.email) });
    expect(text(consent)).toContain("Connect Page test client?");
  });

  it("lets someone else sign in from the consent page", async () => {
    const [first, second] = [await createAccount(service.core), await createAccount(service.core)];
    const person = personAt("198.51.100.5");
    const start = (await person.open(authorizeUrl())) as PageAnswer;
    const code = (await person.submit(start, "email", { email: first.email })) as PageAnswer;
    const consent = (await person.submit(code, "code", { email: first.email, code: await smtp.codeFor(first.email) })) as PageAnswer;
    expect(text(consent)).toContain(first.email);
    const other = (await person.open(
      new URL(/href="([^"]+account=other)"/.exec(consent.html)![1]!.replace(/&#38;/g, "&"), service.baseUrl).href,
    )) as PageAnswer;
    const otherCode = (await person.submit(other, "email", { email: second.email })) as PageAnswer;
    const secondConsent = (await person.submit(otherCode, "code", { email: second.email, code: await smtp.codeFor(second.email) })) as PageAnswer;
    expect(text(secondConsent)).toContain(second.email);
    expect(text(secondConsent)).not.toContain(first.email);
    const landed = await person.submit(secondConsent as PageAnswer, "consent", { Allow: "allow" });
    expect(landed).toBeInstanceOf(URL);
    expect((landed as URL).searchParams.get("code")).toBeTruthy();
  });
});
