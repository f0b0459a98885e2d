import { hkdfSync, randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Database } from "./db/database.js";
import { serverSecrets } from "./db/schema/server-secrets.js";

/** Keys derived from the one server secret; each use gets its own so none can stand in for another. */
export interface ServerSecrets {
  /** The 32-byte key for one purpose, named by label; derived on first use, then remembered. */
  derive(label: string): Buffer;
}

/**
 * Loads SECRET_KEY, or the secret generated on first start and kept in the database. Several
 * processes starting together agree on one: the insert is a no-op for all but the first.
 */
export async function loadServerSecrets(db: Database, configured: string | undefined): Promise<ServerSecrets> {
  let master = configured;
  if (!master) {
    await db
      .insert(serverSecrets)
      .values({ name: "master", value: randomBytes(32).toString("base64url") })
      .onConflictDoNothing();
    const [row] = await db.select().from(serverSecrets).where(eq(serverSecrets.name, "master"));
    master = row!.value;
  }
  const ikm = Buffer.from(master, "utf8");
  // Keys are used on hot paths (every push token, every webhook delivery): HKDF runs once per label.
  const keys = new Map<string, Buffer>();
  const derive = (label: string) => {
    let key = keys.get(label);
    if (!key) keys.set(label, (key = Buffer.from(hkdfSync("sha256", ikm, Buffer.alloc(0), `agentline:${label}`, 32))));
    return key;
  };
  return { derive };
}
