/**
 * Where the SDK and the CLI find the service and the API key. In order: what the code passes,
 * then the environment (`AGENTLINE_BASE_URL`, `AGENTLINE_API_KEY`), then the file `agentline login`
 * writes (`$XDG_CONFIG_HOME/agentline/config.json`, by default `~/.config/agentline/config.json`,
 * mode 0600). The file's key is used only for the base URL it was issued by.
 */

export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

/** What `agentline login` keeps. */
export interface SavedCredentials {
  base_url: string;
  api_key: string;
  account_id?: string;
  email?: string;
}

export interface Connection {
  baseUrl: string;
  apiKey: string | undefined;
}

type Env = Record<string, string | undefined>;

// Node's modules are fetched at run time (never imported statically), so the SDK still loads in
// a browser, where there is no file to read and `process` is undefined.
const nodeProcess = (globalThis as { process?: NodeJS.Process }).process;
const builtin = <T>(id: string): T | undefined => nodeProcess?.getBuiltinModule?.(id) as T | undefined;

/** The path of the credentials file for this environment, or undefined outside Node. */
export function credentialsPath(env: Env = nodeProcess?.env ?? {}): string | undefined {
  const path = builtin<typeof import("node:path")>("node:path");
  const os = builtin<typeof import("node:os")>("node:os");
  if (!path || !os) return undefined;
  if (env.AGENTLINE_CONFIG) return env.AGENTLINE_CONFIG;
  const configHome = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), ".config");
  return path.join(configHome, "agentline", "config.json");
}

/** The saved credentials, or undefined when there are none (or outside Node). */
export function readCredentials(env?: Env): SavedCredentials | undefined {
  const file = credentialsPath(env);
  const fs = builtin<typeof import("node:fs")>("node:fs");
  if (!file || !fs?.existsSync(file)) return undefined;
  try {
    const saved = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<SavedCredentials>;
    return typeof saved.base_url === "string" && typeof saved.api_key === "string" ? (saved as SavedCredentials) : undefined;
  } catch {
    return undefined;
  }
}

/** Saves credentials readable by this user only (directory 0700, file 0600). Returns the path. */
export function writeCredentials(credentials: SavedCredentials, env?: Env): string {
  const file = credentialsPath(env);
  const fs = builtin<typeof import("node:fs")>("node:fs");
  const path = builtin<typeof import("node:path")>("node:path");
  if (!file || !fs || !path) throw new Error("credentials can only be saved under Node.js");
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, JSON.stringify(credentials, null, 2) + "\n", { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}

/** The base URL and key to use, from explicit options, the environment, then the saved file. */
export function resolveConnection(options: { baseUrl?: string; apiKey?: string } = {}, env: Env = nodeProcess?.env ?? {}): Connection {
  const saved = readCredentials(env);
  const baseUrl = trimSlash(options.baseUrl ?? env.AGENTLINE_BASE_URL ?? saved?.base_url ?? DEFAULT_BASE_URL);
  const apiKey = options.apiKey ?? env.AGENTLINE_API_KEY ?? (saved && trimSlash(saved.base_url) === baseUrl ? saved.api_key : undefined);
  return { baseUrl, apiKey: apiKey || undefined };
}

const trimSlash = (url: string) => url.replace(/\/+$/, "");
