import { hkdfSync, randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Database } from "./db/database.js";
import { serverSecrets } from "./db/schema/server-secrets.js";

/** Keys derived from the one server secret; each use gets its own so none can stand in for another. */
export interface ServerSecrets {
  /** HMAC key for stored OTP codes. */
  otpPepper: Buffer;
  /** HMAC key that makes a call's push token. */
  pushTokenKey: Buffer;
  /** Derives a 32-byte key for another purpose, named by label. */
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
  const derive = (label: string) => Buffer.from(hkdfSync("sha256", ikm, Buffer.alloc(0), `agentline:${label}`, 32));
  return { otpPepper: derive("otp-pepper"), pushTokenKey: derive("push-token"), derive };
}
