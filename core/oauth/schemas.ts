import { z } from "zod";
import { Timestamp } from "../schemas/common.js";
import { ALL_SCOPES } from "./scopes.js";

export const Connection = z
  .object({
    connection_id: z.string().meta({ description: "`conn_...`: disconnect it with DELETE /v1/auth/connections/{connection_id}" }),
    client_id: z
      .string()
      .meta({ description: "The client's OAuth client_id: random for a registered client, a URL for one that publishes a client ID metadata document" }),
    client_name: z.string().meta({ description: "What the client calls itself, as the consent page showed it" }),
    redirect_host: z.string().meta({ description: "Where its authorization answer went" }),
    scopes: z.array(z.enum(ALL_SCOPES)).meta({ description: "What it may do" }),
    agent_id: z.string().nullable().meta({ description: "The one agent it may see and act for; null for the whole account" }),
    created_at: Timestamp,
    last_used_at: Timestamp.nullable().meta({ description: "When it last used /mcp (to the minute)" }),
    expires_at: Timestamp.meta({ description: "When its sign-in ends at the latest; the client must sign in again after" }),
  })
  .meta({ id: "Connection", description: "An MCP client connected to the account with OAuth" });
export type Connection = z.infer<typeof Connection>;

export const ConnectionIdParams = z.object({ connection_id: z.string() });

export const Disconnected = z.object({ connection_id: z.string(), disconnected: z.literal(true), disconnected_at: Timestamp }).meta({ id: "Disconnected" });
