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
  return text.replaceAll("%", "%%");
}

/**
 * A value as JSON text for SQL's format(): every hole becomes `%n$s`, everything else is written
 * as JSON.stringify writes it (keys in the same order, undefined members left out), with its `%`
 * doubled. Holes are found by what they are, never by their text, so no value can pass for one.
 */
export function jsonTemplate(value: unknown): string {
  if (value instanceof Hole) return `%${value.argument}$s`;
  if (typeof (value as { toJSON?: unknown } | null)?.toJSON === "function") return formatLiteral(JSON.stringify(value));
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : jsonTemplate(item))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const members = Object.entries(value).filter(([, member]) => member !== undefined);
    return `{${members.map(([key, member]) => `${formatLiteral(JSON.stringify(key))}:${jsonTemplate(member)}`).join(",")}}`;
  }
  return formatLiteral(JSON.stringify(value));
}
