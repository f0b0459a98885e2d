import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { AppError, ERROR_CODES, type ErrorCode } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { UNSTORABLE_MESSAGE, unstorableString } from "../../core/schemas/validation.js";

/** A WebSocket endpoint: the path it serves and how it takes over an upgrade request. */
export interface UpgradeRoute {
  pattern: RegExp;
  handle(req: IncomingMessage, socket: Duplex, head: Buffer, match: RegExpExecArray): Promise<void>;
  /** Closes every socket it holds (on shutdown). */
  close(): void;
}

/**
 * Thrown by a handler to refuse an upgrade with an HTTP problem response. Any AppError a handler
 * lets through refuses it the same way, with the error's own code, detail and headers.
 */
export class UpgradeRefusal extends AppError {
  constructor(code: ErrorCode, detail: string, headers: Record<string, string> = {}) {
    super(code, detail, { headers });
  }
}

/** An AppError as a whole HTTP/1.1 problem response, for a connection express does not answer. */
export function rawProblemResponse(error: AppError): string {
  const { status, title } = ERROR_CODES[error.code];
  const body = JSON.stringify({ title, status, detail: error.detail, code: error.code, ...(error.errors ? { errors: error.errors } : {}), ...error.extra });
  const headers = { "Content-Type": "application/problem+json", "Content-Length": String(Buffer.byteLength(body)), Connection: "close", ...error.headers };
  return `HTTP/1.1 ${status} ${title}\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\r\n")}\r\n\r\n${body}`;
}

/** Answers an upgrade request with a plain HTTP problem instead of switching protocols. */
function refuse(socket: Duplex, refusal: AppError): void {
  socket.end(rawProblemResponse(refusal));
}

/**
 * The upgrade's URL, or the refusal of one no endpoint could read: one that does not parse (a
 * 400), a path that does not decode or holds text no row could (a NUL, a lone surrogate: not
 * found, as REST answers), a query parameter holding such text (a 422 naming it).
 */
function readUrl(raw: string): URL | AppError {
  let url: URL;
  try {
    url = new URL(raw, "http://localhost");
  } catch {
    return new UpgradeRefusal("bad_request", "The request URL cannot be parsed.");
  }
  if (!decodesToStorable(url.pathname)) return new UpgradeRefusal("not_found", `No WebSocket endpoint at ${url.pathname}.`);
  const bad = [...url.searchParams].find(([name, value]) => unstorableString({ [name]: value }) !== undefined);
  if (!bad) return url;
  const field = encodeURIComponent(bad[0]);
  return new AppError("validation_error", `The query parameter ${field} has text that cannot be stored.`, {
    errors: [{ field, in: "query", message: UNSTORABLE_MESSAGE }],
  });
}

function decodesToStorable(path: string): boolean {
  try {
    return unstorableString(decodeURIComponent(path)) === undefined;
  } catch {
    return false;
  }
}

/** Routes the server's upgrade requests to the WebSocket endpoints; anything else is a 404. */
export function attachUpgrades(server: Server, routes: UpgradeRoute[], logger: Logger): void {
  server.on("upgrade", (req, socket, head) => {
    // Node hands an upgrading socket over with no 'error' listener, and a route checks credentials
    // in the database before ws takes the socket: a client that resets meanwhile would otherwise
    // raise an uncaught exception and end the process.
    socket.on("error", () => socket.destroy());
    const url = readUrl(req.url ?? "/");
    if (url instanceof AppError) return refuse(socket, url);
    const path = url.pathname;
    for (const route of routes) {
      const match = route.pattern.exec(path);
      if (!match) continue;
      route.handle(req, socket, head, match).catch((error: unknown) => {
        if (error instanceof AppError) return refuse(socket, error);
        logger.error({ err: error }, "websocket upgrade failed");
        refuse(socket, new UpgradeRefusal("internal_error", "The connection could not be set up."));
      });
      return;
    }
    refuse(socket, new UpgradeRefusal("not_found", `No WebSocket endpoint at ${path}.`));
  });
}
