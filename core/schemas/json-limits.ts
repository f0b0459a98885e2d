import { AppError } from "../errors.js";

/**
 * The most the service reads of any JSON it is sent (bodies, payment headers, socket frames,
 * cursors): nesting of arrays and objects at most MAX_JSON_DEPTH deep, and at most
 * MAX_JSON_CONTAINERS of them in all. Building a container costs JSON.parse about fifty times
 * what a byte of a flat string does, and walking deep nesting overflows the stack; within these
 * limits a 1 MiB body costs about what a flat one does. The deepest legitimate body (an MCP
 * tools/call carrying metadata) is about ten levels, the most containers 8 KiB of metadata can
 * hold about four thousand (docs/decisions/0067-json-limits.md).
 */
export const MAX_JSON_DEPTH = 64;
export const MAX_JSON_CONTAINERS = 10_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Which limit JSON text passes, "depth" or "containers", or undefined for neither: one pass over
 * the text, counting brackets outside strings, so a refusal costs about what reading a flat body
 * of the same size does, and the text is never built. Works on UTF-8 bytes or a string alike
 * (every character it looks at is ASCII, and no byte of a multi-byte UTF-8 character is).
 * Malformed text is left for the parser.
 */
export function jsonOverLimits(text: string | Uint8Array): "depth" | "containers" | undefined {
  // A string is read as UTF-16 code units, with no copy: every unit it looks for is ASCII, and
  // no unit of another character (nor half of a surrogate pair) equals one.
  const unitAt = typeof text === "string" ? (i: number) => text.charCodeAt(i) : (i: number) => text[i]!;
  let depth = 0;
  let containers = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = unitAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH) return "depth";
      if (++containers > MAX_JSON_CONTAINERS) return "containers";
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return undefined;
}

/** The 400 for JSON over a limit; `what` names it ("The request body"). */
export function overLimits(what: string, limit: "depth" | "containers"): AppError {
  const broken =
    limit === "depth"
      ? `nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`
      : `holds more than ${MAX_JSON_CONTAINERS.toLocaleString("en")} arrays and objects`;
  return new AppError("malformed_json", `${what} ${broken}, the most this service reads.`, {
    extra: { max_depth: MAX_JSON_DEPTH, max_containers: MAX_JSON_CONTAINERS },
  });
}

/**
 * JSON.parse for text a client sent, refusing it over the limits before anything is built: what
 * it returns can be walked recursively without overflowing the stack. Throws AppError
 * malformed_json for text that is not JSON or is over a limit; `what` names it in the detail.
 */
export function parseClientJson(text: string, what = "The JSON"): unknown {
  const over = jsonOverLimits(text);
  if (over) throw overLimits(what, over);
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("malformed_json", `${what} is not valid JSON.`);
  }
}
