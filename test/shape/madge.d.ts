// madge ships no types; this is the part of its API the shape test uses.
declare module "madge" {
  interface MadgeResult {
    circular(): string[][];
  }
  export default function madge(path: string | string[], config?: Record<string, unknown>): Promise<MadgeResult>;
}
