import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../support/api.js";
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
