import { AppError } from "../errors.js";
import { parseClientJson } from "./json-limits.js";
import { UNSTORABLE_MESSAGE, unstorableString } from "./validation.js";

/** What a socket answers a client frame it refuses with; `field` names the offending field, where one does. */
export type ErrorFrame = { type: "error"; code: "validation_error" | "malformed_json"; message: string; field?: string };

/**
 * A client's text frame read as JSON, or the error frame refusing it. Text the database cannot
 * hold (a NUL, a lone UTF-16 surrogate) is refused here, naming its field as REST does
 * (core/schemas/validation.ts), so no socket can turn it into a database error.
 */
export function readClientFrame(data: string): { frame: Record<string, unknown> } | { error: ErrorFrame } {
  let frame: unknown;
  try {
    // Over the nesting limits, a frame is refused before it is built (core/schemas/json-limits.ts).
    frame = parseClientJson(data, "The frame");
  } catch (error) {
    if (error instanceof AppError && "max_depth" in error.extra) return { error: { type: "error", code: "malformed_json", message: error.detail } };
    return { error: { type: "error", code: "validation_error", message: "frames must be JSON" } };
  }
  // JSON.parse refuses a raw NUL, and ws refuses text that is not UTF-8: such text can only come
  // as a \u escape. Most frames have none and skip the walk (a live turn's frames among them).
  const bad = data.includes("\\u") ? unstorableString(frame) : undefined;
  if (bad !== undefined)
    return { error: { type: "error", code: "validation_error", field: bad || "frame", message: `${bad || "the frame"} ${UNSTORABLE_MESSAGE}` } };
  return { frame: frame !== null && typeof frame === "object" ? (frame as Record<string, unknown>) : {} };
}
