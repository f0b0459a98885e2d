import { resolve, sep } from "node:path";
import { ConfigError, maskUrlPassword, SECRET_SETTINGS } from "../core/config.js";

type Env = Record<string, string | undefined>;
type Failure = Error & { code?: string; syscall?: string; path?: string; address?: string; port?: number; errors?: unknown[] };

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: "connection refused: is PostgreSQL running there?",
  ETIMEDOUT: "the connection timed out",
  CONNECT_TIMEOUT: "the connection timed out",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name could not be resolved",
  ECONNRESET: "the server closed the connection",
};

/** The error's own code, or that of the first of several (a connection tried over IPv6 and IPv4). */
function codeOf(error: Failure): string | undefined {
  return error.code ?? (error.errors?.[0] as Failure | undefined)?.code;
}

function databaseAt(url: string): { where: string; database: string; user: string } {
  try {
    const parsed = new URL(url);
    return {
      where: `${parsed.hostname}:${parsed.port || "5432"}`,
      database: decodeURIComponent(parsed.pathname.slice(1)) || "postgres",
      user: decodeURIComponent(parsed.username),
    };
  } catch {
    return { where: "DATABASE_URL's host", database: "", user: "" };
  }
}

/** The cause, in words, when the database could not be opened; undefined for any other failure. */
function databaseProblem(error: Failure, env: Env): string | undefined {
  const url = env.DATABASE_URL;
  if (!url) return undefined;
  const { where, database, user } = databaseAt(url);
  const code = codeOf(error);
  if (code && UNREACHABLE[code]) return `cannot reach the database at ${where} (DATABASE_URL): ${UNREACHABLE[code]}`;
  switch (code) {
    case "3D000":
      return `the database "${database}" does not exist at ${where} (DATABASE_URL): create it (createdb ${database}) or name another one`;
    case "28P01":
    case "28000":
      return `PostgreSQL at ${where} refused the login of "${user}" (DATABASE_URL): ${error.message}`;
    case "57P03":
      return `PostgreSQL at ${where} is starting up or shutting down (DATABASE_URL): try again in a moment`;
    case "53300":
      return `PostgreSQL at ${where} has no free connections (DATABASE_URL): ${error.message}`;
    default:
      return undefined;
  }
}

const DATA_DIR_FAILURES: Record<string, string> = {
  EEXIST: "a file is in the way of that directory",
  ENOTDIR: "a part of that path is a file, not a directory",
  EACCES: "no permission to create or write it",
  EPERM: "no permission to create or write it",
  EROFS: "it is on a read-only file system",
  ENOSPC: "the disk is full",
};

/**
 * The embedded database's directory could not be made or written: named as DATA_DIR, since the
 * file system's own message ("EEXIST: file already exists, mkdir ...") names no setting.
 */
function dataDirProblem(error: Failure, env: Env): string | undefined {
  if (env.DATABASE_URL || !error.path) return undefined;
  const setting = env.DATA_DIR || "./.data";
  if (setting === "memory://") return undefined;
  const dir = resolve(setting);
  const failed = resolve(error.path);
  const related = failed === dir || dir.startsWith(failed + sep) || failed.startsWith(dir + sep);
  const why = DATA_DIR_FAILURES[codeOf(error) ?? ""];
  if (!related || !why) return undefined;
  const at = failed === dir ? "" : ` (${failed})`;
  return `cannot use ${dir} for the embedded database (DATA_DIR): ${why}${at}; choose another DATA_DIR, or set DATABASE_URL`;
}

function listenProblem(error: Failure, env: Env): string | undefined {
  const port = error.port ?? env.PORT ?? "8080";
  const host = error.address ?? env.HOST ?? "127.0.0.1";
  switch (codeOf(error)) {
    case "EADDRINUSE":
      return `port ${port} on ${host} is already in use (PORT): stop the process using it, or choose another PORT (0 picks a free one)`;
    case "EACCES":
      return error.syscall === "listen" ? `no permission to listen on port ${port} (PORT): use a port above 1023` : undefined;
    case "EADDRNOTAVAIL":
      return `cannot listen on ${host} (HOST): this machine has no such address`;
    default:
      return undefined;
  }
}

/**
 * Why the service could not start, in one line naming the cause and the setting behind it: a bad
 * configuration, an unreachable or missing database, an unusable DATA_DIR, a port in use. No stack trace (set
 * LOG_LEVEL=debug for one), and never a secret: passwords in URLs are masked, and the settings
 * that are secrets are named without their values.
 */
export function describeStartupError(error: unknown, env: Env): string {
  if (error instanceof ConfigError) return error.message;
  const failure = (error instanceof Error ? error : new Error(String(error))) as Failure;
  const line =
    databaseProblem(failure, env) ??
    dataDirProblem(failure, env) ??
    listenProblem(failure, env) ??
    `${failure.name === "Error" ? "" : `${failure.name}: `}${failure.message.split("\n")[0]}`;
  return redact(line, env);
}

/** Removes every secret the environment holds from a message. */
function redact(text: string, env: Env): string {
  let out = text;
  for (const name of ["DATABASE_URL", "SMTP_URL"]) {
    const value = env[name];
    if (value) out = out.split(value).join(maskUrlPassword(value));
  }
  // The CLI's key is a secret too, though the service itself never reads it.
  for (const name of [...SECRET_SETTINGS, "AGENTLINE_API_KEY"]) {
    const value = env[name];
    if (value && value.length >= 4) out = out.split(value).join(`<${name}>`);
  }
  return out;
}

/** Whether the full stack trace is wanted as well (LOG_LEVEL debug or trace). */
export function wantsStack(env: Env): boolean {
  return env.LOG_LEVEL === "debug" || env.LOG_LEVEL === "trace";
}
