import { z } from "zod";
import { Greeting } from "../calls/schemas.js";
import { PhoneNumber, Timestamp } from "../schemas/common.js";
import { VoiceId } from "../voices/catalogue.js";

const MAX_METADATA_BYTES = 8 * 1024;

/** Free-form data the client keeps on a record: at most 50 keys and 8 KiB of JSON. */
export const Metadata = z
  .record(z.string().min(1).max(40), z.unknown())
  .refine((m) => Object.keys(m).length <= 50, "may have at most 50 keys")
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= MAX_METADATA_BYTES, `may be at most ${MAX_METADATA_BYTES} bytes of JSON`)
  .meta({ description: "Your own key-value data (at most 50 keys, 8 KiB as JSON)", example: { crm_id: "c_123" } });

const Name = z.string().trim().min(1).max(100).meta({ description: "The agent's name", example: "Front desk" });
const Description = z.string().max(1000).meta({ description: "What the agent is for" });

/** The agent's owner: a person whose calls are instructions, not a customer's. */
const OwnerNumber = PhoneNumber.meta({
  description: "The phone of the person the agent works for (E.164): what they say on a call arrives as call.owner_task, instructions to carry out",
});

export const Agent = z
  .object({
    agent_id: z.string().meta({ example: "agt_01jdz3k7q8m9x2v4b6n8p0r2t4" }),
    name: z.string(),
    description: z.string().nullable(),
    owner_number: PhoneNumber.nullable().meta({
      description: "Calls from this number are the owner's: is_owner_call is true and what the owner says becomes a call.owner_task event.",
    }),
    voice_id: z.string().nullable().meta({ description: "Overrides the account default voice; null uses the default." }),
    greeting: z
      .string()
      .nullable()
      .meta({ description: "Spoken when the agent answers an inbound call, before the caller says anything; null: silence until the caller speaks." }),
    metadata: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Agent" });
export type Agent = z.infer<typeof Agent>;

export const CreateAgentBody = z
  .strictObject({
    name: Name,
    description: Description.optional(),
    owner_number: OwnerNumber.optional(),
    voice_id: VoiceId.optional(),
    greeting: Greeting.optional(),
    metadata: Metadata.optional(),
  })
  .meta({ id: "CreateAgentRequest" });
export type CreateAgentBody = z.infer<typeof CreateAgentBody>;

export const UpdateAgentBody = z
  .strictObject({
    name: Name.optional(),
    description: Description.nullable().optional(),
    owner_number: OwnerNumber.nullable().optional(),
    voice_id: VoiceId.nullable().optional(),
    greeting: Greeting.nullable().optional(),
    metadata: Metadata.optional(),
  })
  .meta({ id: "UpdateAgentRequest", description: "Only the fields sent change; null clears a field." });
export type UpdateAgentBody = z.infer<typeof UpdateAgentBody>;

export const AgentIdParams = z.object({ agent_id: z.string().meta({ description: "The agent's id (agt_...)" }) });

const NumberRef = z.object({ number_id: z.string(), phone_number: PhoneNumber });

/** What deleting an agent did: the agent is gone, and so are the numbers it was paying for. */
export const DeletedAgent = z
  .object({
    agent_id: z.string(),
    deleted: z.literal(true),
    released_numbers: z.array(NumberRef).meta({
      description: "The agent's purchased numbers, released with it (permanently): no more monthly fees. Reassign a number before deleting to keep it.",
    }),
    unassigned_numbers: z.array(NumberRef).meta({
      description: "The agent's attached numbers (bought elsewhere, no fee here): they stay on the account, unassigned, until reassigned or released.",
    }),
  })
  .meta({ id: "DeletedAgent" });
