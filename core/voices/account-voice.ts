import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { accounts } from "../db/schema/accounts.js";
import { notFound } from "../errors.js";
import { findVoice, SYSTEM_DEFAULT_VOICE_ID, Voice, VoiceId } from "./catalogue.js";

/** The account's default voice, where it comes from, and the preset itself. */
export const AccountVoice = z
  .object({
    voice_id: z.string().meta({ example: "joanna" }),
    source: z.enum(["account", "system"]).meta({
      description: "`account`: chosen with PATCH /v1/account/voice. `system`: the service default, in effect until you choose one.",
    }),
    voice: Voice,
  })
  .meta({ id: "AccountVoice", description: "Agents without a voice_id of their own speak with this voice." });
export type AccountVoice = z.infer<typeof AccountVoice>;

/** The body of PATCH /v1/account/voice. */
export const SetAccountVoiceBody = z.strictObject({ voice_id: VoiceId }).meta({ id: "SetAccountVoiceRequest" });
export type SetAccountVoiceBody = z.infer<typeof SetAccountVoiceBody>;

/**
 * A stored voice id that is still in the catalogue, else null. Ids are validated on the way in,
 * but a preset could leave the catalogue after it was stored; treating it as unset means a call
 * never asks the carrier for a voice it cannot speak.
 */
function known(voiceId: string | null | undefined): string | null {
  return voiceId && findVoice(voiceId) ? voiceId : null;
}

function present(storedVoiceId: string | null): AccountVoice {
  const chosen = known(storedVoiceId);
  const voiceId = chosen ?? SYSTEM_DEFAULT_VOICE_ID;
  return { voice_id: voiceId, source: chosen ? "account" : "system", voice: findVoice(voiceId)! };
}

async function storedDefault(db: Executor, accountId: string): Promise<string | null> {
  const [row] = await db.select({ voiceId: accounts.defaultVoiceId }).from(accounts).where(eq(accounts.accountId, accountId));
  if (!row) throw notFound("account", accountId);
  return row.voiceId;
}

async function storeDefault(core: Core, accountId: string, voiceId: string | null): Promise<AccountVoice> {
  const [row] = await core.db
    .update(accounts)
    .set({ defaultVoiceId: voiceId })
    .where(eq(accounts.accountId, accountId))
    .returning({ voiceId: accounts.defaultVoiceId });
  if (!row) throw notFound("account", accountId);
  return present(row.voiceId);
}

/** The account's default voice, or the system default while it has not chosen one. */
export async function getAccountVoice(core: Core, accountId: string): Promise<AccountVoice> {
  return present(await storedDefault(core.db, accountId));
}

/** Makes voiceId (a catalogue id, already validated) the account's default. */
export function setAccountVoice(core: Core, accountId: string, voiceId: string): Promise<AccountVoice> {
  return storeDefault(core, accountId, voiceId);
}

/** Forgets the account's choice, so the system default applies again. Repeating it is harmless. */
export function resetAccountVoice(core: Core, accountId: string): Promise<AccountVoice> {
  return storeDefault(core, accountId, null);
}

/**
 * The voice in effect for an agent: its own voice_id, else the account default, else the system
 * default. Calls record this when they start, so a later change of default does not rewrite
 * history. Takes an Executor so it can run inside the caller's transaction.
 */
export async function resolveVoiceId(db: Executor, accountId: string, agentVoiceId: string | null): Promise<string> {
  const own = known(agentVoiceId);
  if (own) return own;
  return known(await storedDefault(db, accountId)) ?? SYSTEM_DEFAULT_VOICE_ID;
}
