import type Provider from "oidc-provider";
import type { Core } from "../../core/context.js";

let loading: Promise<typeof import("./provider.js")> | undefined;

/**
 * The authorization server (gateway/oauth/provider.ts), loaded on first use: oidc-provider takes
 * a few hundred milliseconds to import, which only OAuth requests need. On Node 20 it prints a
 * warning when it loads (it prefers Node 22; it works on 20): that line goes to the log as JSON,
 * like every other, instead of a bare line on stderr.
 */
export async function authorizationServer(core: Core): Promise<Provider> {
  loading ??= (async () => {
    const warn = console.warn;
    console.warn = (...args: unknown[]) => core.logger.warn({ library: "oidc-provider" }, args.map(String).join(" "));
    try {
      return await import("./provider.js");
    } finally {
      console.warn = warn;
    }
  })();
  return (await loading).oauthProvider(core);
}
