import { z } from "zod";
import type { DatabaseHandle } from "../core/db/database.js";

export const Health = z
  .object({
    status: z.enum(["ok", "unavailable"]),
    database: z.enum(["ok", "unreachable"]),
    version: z.string(),
  })
  .meta({ id: "Health" });
export type Health = z.infer<typeof Health>;

const PING_TIMEOUT_MS = 2_000;

/** Checks that the database answers within two seconds. */
export async function checkHealth(database: DatabaseHandle, version: string): Promise<Health> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("database ping timed out")), PING_TIMEOUT_MS);
  });
  try {
    await Promise.race([database.ping(), timeout]);
    return { status: "ok", database: "ok", version };
  } catch {
    return { status: "unavailable", database: "unreachable", version };
  } finally {
    clearTimeout(timer);
  }
}
