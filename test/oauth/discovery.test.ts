import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl);
});
afterAll(() => service?.stop());

const SCOPES = ["agentline:read", "agentline:write", "agentline:spend"];
const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

describe("how an MCP client finds the authorization server", () => {
  it("answers POST /mcp with no credential with a 401 naming the protected resource metadata and the scopes", async () => {
    const res = await api.post("/mcp", initialize, { headers: { accept: "application/json, text/event-stream" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer realm="agentline", resource_metadata="${service.baseUrl}/.well-known/oauth-protected-resource/mcp", scope="${SCOPES.join(" ")}"`,
    );
  });

  it("serves the protected resource metadata (RFC 9728) at the path form and the root form", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await api.get(path);
      expect(res.status, path).toBe(200);
      expect(res.body).toMatchObject({
        resource: `${service.baseUrl}/mcp`,
        authorization_servers: [service.baseUrl],
        scopes_supported: SCOPES,
        bearer_methods_supported: ["header"],
      });
    }
  });

  it("serves the authorization server metadata (RFC 8414) with what MCP clients need", async () => {
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
      const res = await fetch(service.baseUrl + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      const metadata = (await res.json()) as Record<string, any>;
      expect(metadata).toMatchObject({
        issuer: service.baseUrl,
        authorization_endpoint: `${service.baseUrl}/oauth/authorize`,
        token_endpoint: `${service.baseUrl}/oauth/token`,
        registration_endpoint: `${service.baseUrl}/oauth/register`,
        revocation_endpoint: `${service.baseUrl}/oauth/revoke`,
        code_challenge_methods_supported: ["S256"],
        response_types_supported: ["code"],
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
      });
      expect(metadata.token_endpoint_auth_methods_supported).toContain("none");
      expect(metadata.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
      expect(metadata.scopes_supported).toEqual(expect.arrayContaining(SCOPES));
    }
  });

  it("links them from the service document and from /", async () => {
    const doc = await api.get("/.well-known/service.json");
    expect(doc.body.links).toMatchObject({
      oauth_protected_resource: `${service.baseUrl}/.well-known/oauth-protected-resource/mcp`,
      oauth_authorization_server: `${service.baseUrl}/.well-known/oauth-authorization-server`,
    });
    expect(doc.body.auth.methods.map((m: { type: string }) => m.type)).toContain("oauth");
    const root = await api.get("/", { headers: { accept: "application/json" } });
    expect(root.body).toMatchObject({ oauth_protected_resource: `${service.baseUrl}/.well-known/oauth-protected-resource/mcp` });
  });
});

describe("behind a proxy, with BASE_URL", () => {
  it("names BASE_URL in every document and challenge whatever Host and X-Forwarded-* a request carries, and marks its cookies Secure", async () => {
    const behind = await startTestService({ env: { BASE_URL: "https://phone.example.com", TRUST_PROXY: "loopback" } });
    // BASE_URL is the public name; the test reaches the process where it listens, as the proxy would.
    const local = `http://127.0.0.1:${behind.port}`;
    try {
      const spoofed = { host: "evil.example", "x-forwarded-host": "evil.example", "x-forwarded-proto": "http" };
      const metadata = (await (await fetch(`${local}/.well-known/oauth-authorization-server`, { headers: spoofed })).json()) as Record<string, string>;
      expect(metadata.issuer).toBe("https://phone.example.com");
      expect(metadata.authorization_endpoint).toBe("https://phone.example.com/oauth/authorize");
      expect(metadata.token_endpoint).toBe("https://phone.example.com/oauth/token");
      const resource = (await (await fetch(`${local}/.well-known/oauth-protected-resource/mcp`, { headers: spoofed })).json()) as Record<string, unknown>;
      expect(resource).toMatchObject({ resource: "https://phone.example.com/mcp", authorization_servers: ["https://phone.example.com"] });
      const refused = await fetch(`${local}/mcp`, {
        method: "POST",
        headers: { ...spoofed, accept: "application/json, text/event-stream", "content-type": "application/json" },
        body: JSON.stringify(initialize),
      });
      expect(refused.headers.get("www-authenticate")).toContain('resource_metadata="https://phone.example.com/.well-known/oauth-protected-resource/mcp"');

      const registered = await fetch(`${local}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:1/callback"], token_endpoint_auth_method: "none" }),
      });
      const { client_id } = (await registered.json()) as { client_id: string };
      const authorize = await fetch(
        `${local}/oauth/authorize?response_type=code&client_id=${client_id}&redirect_uri=${encodeURIComponent("http://127.0.0.1:1/callback")}&code_challenge=${"c".repeat(43)}&code_challenge_method=S256`,
        { headers: spoofed, redirect: "manual" },
      );
      expect(authorize.status).toBe(303);
      expect(authorize.headers.get("location")).toMatch(/^\/oauth\/interaction\//);
      const cookies = authorize.headers.getSetCookie();
      expect(cookies.length).toBeGreaterThan(0);
      for (const cookie of cookies) expect(cookie.toLowerCase()).toContain("; secure");
    } finally {
      await behind.stop();
    }
  });
});
