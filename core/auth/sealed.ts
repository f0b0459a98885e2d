import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { Core } from "../context.js";

const PREFIX = "sealed:v1:";
const LABEL = "stored-answer-secrets";

/**
 * A secret sealed for storage (AES-256-GCM under a key derived from the server secret): what a
 * stored answer keeps of a credential it returned, so a retry can answer it again while the
 * database never holds it in the clear.
 */
export function seal(core: Pick<Core, "secrets">, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", core.secrets.derive(LABEL), iv);
  const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64url");
}

/** The secret back from `seal`; a value that is not sealed is returned as it is. */
export function unseal(core: Pick<Core, "secrets">, value: string): string {
  if (!value.startsWith(PREFIX)) return value;
  const bytes = Buffer.from(value.slice(PREFIX.length), "base64url");
  const decipher = createDecipheriv("aes-256-gcm", core.secrets.derive(LABEL), bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
}
