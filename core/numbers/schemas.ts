import { z } from "zod";
import { Pagination, PhoneNumber, Timestamp } from "../schemas/common.js";

export const NumberType = z.enum(["local", "toll_free", "mobile"]);

export const PhoneNumberRecord = z
  .object({
    number_id: z.string().meta({ example: "num_01jdz3k7q8m9x2v4b6n8p0r2t4" }),
    phone_number: PhoneNumber,
    agent_id: z.string().nullable().meta({ description: "The agent that answers it; null when unassigned" }),
    country: z.string().meta({ description: "ISO 3166-1 alpha-2", example: "US" }),
    number_type: NumberType,
    status: z.enum(["active", "released"]),
    source: z.enum(["purchased", "attached"]).meta({ description: "Bought through the service, or attached after buying elsewhere" }),
    created_at: Timestamp,
    released_at: Timestamp.nullable(),
    renews_at: Timestamp.nullable().meta({ description: "A monthly number: when the next month is charged" }),
    expires_at: Timestamp.nullable().meta({ description: "A prepaid lease (no-signup route): when it ends unless renewed" }),
    record_inbound: z.boolean().meta({ description: "Inbound calls to the number are recorded, after the recording notice" }),
  })
  .meta({ id: "PhoneNumber" });
export type PhoneNumberRecord = z.infer<typeof PhoneNumberRecord>;

export const BuyNumberBody = z
  .strictObject({
    agent_id: z.string().min(1).meta({ description: "The agent that will answer the number" }),
    country: z
      .string()
      .regex(/^[A-Z]{2}$/, "must be a two-letter ISO 3166 country code in capitals, such as US")
      .default("US")
      .meta({ description: "ISO 3166-1 alpha-2 (default US)" }),
    number_type: NumberType.default("local").meta({ description: "local (default): a number of a town's area code; toll_free: free to call; mobile" }),
    area_code: z
      .string()
      .regex(/^\d{2,4}$/, "must be 2 to 4 digits")
      .optional()
      .meta({ description: "US area code for a local number, 2 to 4 digits as a string", example: "415" }),
  })
  .meta({ id: "BuyNumberRequest" });
export type BuyNumberBody = z.infer<typeof BuyNumberBody>;

export const ListNumbersQuery = Pagination.extend({
  agent_id: z.string().optional().meta({ description: "Only this agent's numbers" }),
  status: z.enum(["active", "released"]).optional().meta({ description: "Default: active numbers only" }),
});

export const UpdateNumberBody = z
  .strictObject({
    record_inbound: z.boolean().meta({ description: "Record inbound calls to the number: callers hear the recording notice first" }),
  })
  .meta({ id: "UpdateNumberRequest" });

export const NumberIdParams = z.object({ number_id: z.string().meta({ description: "The number's id (num_...), not the phone number" }) });

export const ReassignQuery = z.strictObject({ agent_id: z.string().min(1).meta({ description: "The agent to move the number to" }) });

export const AttachQuery = z.strictObject({
  phone_number: PhoneNumber.meta({ description: "The number bought elsewhere, E.164" }),
  agent_id: z.string().min(1),
});
