/** A place in a JSON template that SQL's format() fills: its argument number there. */
class Hole {
  constructor(readonly argument: number) {}
}

/**
 * A stand-in for a value that only the database knows, filled by format() argument `argument`
 * with a JSON value. Typed to fit any field, so a template is built by the same function as the
 * real value.
 */
export function hole(argument: number): never {
  return new Hole(argument) as never;
}

/** Text that SQL's format() gives back unchanged: its `%` doubled. */
export function formatLiteral(text: string): string {
  return text.includes("%") ? text.replaceAll("%", "%%") : text;
}

/**
 * A value as JSON text for SQL's format(): every hole becomes `%n$s`, everything else is written
 * as JSON.stringify writes it (keys in the same order, undefined members left out), with its `%`
 * doubled. Holes are found by what they are, never by their text, so no value can pass for one.
 */
export function jsonTemplate(value: unknown): string {
  if (value instanceof Hole) return `%${value.argument}$s`;
  if (Array.isArray(value)) {
    let text = "[";
    for (let i = 0; i < value.length; i++) text += (i === 0 ? "" : ",") + (value[i] === undefined ? "null" : jsonTemplate(value[i]));
    return `${text}]`;
  }
  if (typeof value === "object" && value !== null && typeof (value as { toJSON?: unknown }).toJSON !== "function") {
    let text = "";
    for (const key of Object.keys(value)) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) text += `${text === "" ? "" : ","}${formatLiteral(JSON.stringify(key))}:${jsonTemplate(member)}`;
    }
    return `{${text}}`;
  }
  return formatLiteral(JSON.stringify(value));
}
