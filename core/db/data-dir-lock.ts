import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The embedded data directory is held by another live process (a running service, most likely). */
export class DataDirInUseError extends Error {
  override name = "DataDirInUseError";

  constructor(
    readonly dataDir: string,
    readonly holder: number,
  ) {
    super(`DATA_DIR ${dataDir} is in use by process ${holder}; stop it first, or use another DATA_DIR (or DATABASE_URL for several processes).`);
  }
}

/**
 * Claims an embedded data directory for this process. PGlite has one writer and no lock of its
 * own: a second process opening the same directory would corrupt it, so it is refused with a
 * message saying who holds it. A lock left by a process that died is taken over.
 */
export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, "agentline.pid");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: "wx" });
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = Number(readFileSync(path, "utf8"));
      if (holder && holder !== process.pid && isAlive(holder)) {
        throw new DataDirInUseError(dataDir, holder);
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`cannot lock DATA_DIR ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
