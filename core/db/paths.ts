import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The project root: the nearest folder above this file whose package.json is agentline's.
 * The same answer whether code runs from source (tests) or from dist/ (npm start, the bin),
 * and whatever the working directory is (an MCP client may start the bin anywhere).
 */
function findProjectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === "agentline") return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cannot find agentline's package.json above " + import.meta.url);
    dir = parent;
  }
}

export const projectRoot = findProjectRoot();
export const migrationsFolder = join(projectRoot, "core", "db", "migrations");

/** The service version from package.json. */
export const serviceVersion: string = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")).version;
