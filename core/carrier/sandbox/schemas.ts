import { z } from "zod";
import { MAX_SPOKEN_TEXT } from "../../calls/schemas.js";
import { MAX_SMS_TEXT } from "../../messages/schemas.js";
import { PhoneNumber } from "../../schemas/common.js";

export const SandboxInboundCallBody = z
  .strictObject({
    to_number: PhoneNumber.meta({ description: "One of your numbers" }),
    from_number: PhoneNumber.meta({ description: "Who is calling; your agent's owner_number makes it an owner call" }),
  })
  .meta({ id: "SandboxInboundCall" });

export const SandboxSayBody = z
  .strictObject({ text: z.string().trim().min(1).max(MAX_SPOKEN_TEXT).meta({ description: "One finished caller turn" }) })
  .meta({ id: "SandboxSay" });

export const SandboxInboundSmsBody = z
  .strictObject({
    to_number: PhoneNumber.meta({ description: "One of your numbers" }),
    from_number: PhoneNumber,
    text: z.string().min(1).max(MAX_SMS_TEXT).meta({ description: "What the text says" }),
  })
  .meta({ id: "SandboxInboundSms" });

export const SandboxCallStarted = z.object({ call_id: z.string() }).meta({ id: "SandboxCallStarted" });
export const SandboxTurnOpened = z.object({ turn_id: z.string() }).meta({ id: "SandboxTurnOpened" });
export const SandboxSmsDelivered = z.object({ message_id: z.string() }).meta({ id: "SandboxSmsDelivered" });
