import type Provider from "oidc-provider";
import type { Core } from "../../core/context.js";

/**
 * The authorization server (gateway/oauth/provider.ts), loaded on first use: oidc-provider takes
 * a few hundred milliseconds to import, which only OAuth requests need.
 */
export async function authorizationServer(core: Core): Promise<Provider> {
  const { oauthProvider } = await import("./provider.js");
  return oauthProvider(core);
}
