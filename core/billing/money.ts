import { z } from "zod";

export { USD_AMOUNT, usdToMicros } from "../config.js";

/** Money in the API: a decimal string with six places, as USDC has (`"4.950000"`). */
export function formatMicros(micros: number): string {
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(micros);
  return `${sign}${Math.floor(abs / 1_000_000)}.${String(abs % 1_000_000).padStart(6, "0")}`;
}

export const Money = z
  .string()
  .regex(/^-?\d+\.\d{6}$/)
  .meta({ description: "USD as a decimal string with six places", example: "4.950000" });
