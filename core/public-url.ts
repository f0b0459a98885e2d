import type { Core } from "./context.js";

/**
 * An absolute URL of this service for a path, or null when no HTTP service is reachable: a local
 * MCP install over stdio serves no HTTP, and without BASE_URL (naming a service on the same
 * database) there is nothing a link could reach. Events then say so with null rather than carry a
 * URL that leads nowhere.
 */
export function publicUrl(core: Pick<Core, "baseUrl">, path: string): string | null {
  return core.baseUrl ? core.baseUrl + path : null;
}
