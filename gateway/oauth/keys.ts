import { createHash, createPrivateKey } from "node:crypto";
import type { ServerSecrets } from "../../core/secrets.js";

// PKCS #8 DER of an Ed25519 private key is this prefix followed by its 32-byte seed (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/**
 * The authorization server's signing key (for ID tokens, the only thing it signs: access tokens
 * are opaque): an Ed25519 key whose seed is derived from the server secret (SECRET_KEY, or the
 * one generated once and kept in the database), so every process signs with the same key and a
 * restart keeps it. Changing SECRET_KEY changes it.
 */
export function signingKey(secrets: ServerSecrets) {
  const seed = secrets.derive("oauth-signing-key");
  const jwk = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" }).export({ format: "jwk" });
  const kid = createHash("sha256").update(String(jwk.x)).digest("base64url").slice(0, 16);
  return { ...jwk, kid, alg: "EdDSA", use: "sig" };
}

/** The keys that sign the authorization server's cookies, derived alike. */
export function cookieKeys(secrets: ServerSecrets): string[] {
  return [secrets.derive("oauth-cookies").toString("base64url")];
}
