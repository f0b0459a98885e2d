import type { Adapter, AdapterPayload } from "oidc-provider";
import { hashToken } from "../../core/auth/tokens.js";
import type { Core } from "../../core/context.js";
import { endConnection } from "../../core/oauth/connections.js";
import {
  consumeOAuthRecord,
  deleteOAuthRecord,
  deleteOAuthRecordsOfGrant,
  findOAuthRecord,
  findOAuthSessionByUid,
  saveOAuthRecord,
} from "../../core/oauth/records.js";
import { oauthTokenCache } from "../../core/oauth/token-cache.js";

/**
 * oidc-provider's storage, over the database rows of core/oauth/records.ts: one adapter per kind
 * of record (its models: Client, Session, Interaction, Grant, AuthorizationCode, AccessToken,
 * RefreshToken, ...). A grant is a connection of the account: destroying it (a disconnect, a
 * revoked or reused refresh token) ends the connection on every process.
 */
export class RecordAdapter implements Adapter {
  constructor(
    private readonly core: Core,
    private readonly kind: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    await saveOAuthRecord(this.core, this.kind, id, payload as Record<string, unknown>, typeof expiresIn === "number" ? expiresIn : undefined);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return (await findOAuthRecord(this.core, this.kind, id)) as AdapterPayload | undefined;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return (await findOAuthSessionByUid(this.core, uid)) as AdapterPayload | undefined;
  }

  async findByUserCode(): Promise<AdapterPayload | undefined> {
    // The device flow is off: no record has a user code.
    return undefined;
  }

  async consume(id: string): Promise<void> {
    await consumeOAuthRecord(this.core, this.kind, id);
  }

  async destroy(id: string): Promise<void> {
    if (this.kind === "Grant") {
      await endConnection(this.core, id);
      return;
    }
    await deleteOAuthRecord(this.core, this.kind, id);
    // This process at once; every process hears of it when the grant ends, which always follows
    // (revokeGrantPolicy: a revoked token ends its connection).
    if (this.kind === "AccessToken") oauthTokenCache(this.core).forgetToken(hashToken(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await deleteOAuthRecordsOfGrant(this.core, this.kind, grantId);
    if (this.kind === "AccessToken") oauthTokenCache(this.core).forgetConnection(grantId);
  }
}
