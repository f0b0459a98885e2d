import { pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";

/** The one live sign-in code per e-mail address, stored as an HMAC; a new code replaces it. */
export const otpCodes = pgTable("otp_codes", {
  email: text("email").primaryKey(),
  codeHash: text("code_hash").notNull(),
  expiresAt: timestamptz("expires_at").notNull(),
  createdAt: timestamptz("created_at").notNull().defaultNow(),
});
