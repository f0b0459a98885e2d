import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { AppError, ERROR_CODES, type ErrorCode } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";

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

/** Answers an upgrade request with a plain HTTP problem instead of switching protocols. */
function refuse(socket: Duplex, refusal: AppError): void {
  const { status, title } = ERROR_CODES[refusal.code];
  const body = JSON.stringify({ title, status, detail: refusal.detail, code: refusal.code });
  const headers = { "Content-Type": "application/problem+json", "Content-Length": String(Buffer.byteLength(body)), Connection: "close", ...refusal.headers };
  socket.end(`HTTP/1.1 ${status} ${title}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join("\r\n")}\r\n\r\n${body}`);
}

/** Routes the server's upgrade requests to the WebSocket endpoints; anything else is a 404. */
export function attachUpgrades(server: Server, routes: UpgradeRoute[], logger: Logger): void {
  server.on("upgrade", (req, socket, head) => {
    // Node hands an upgrading socket over with no 'error' listener, and a route checks credentials
    // in the database before ws takes the socket: a client that resets meanwhile would otherwise
    // raise an uncaught exception and end the process.
    socket.on("error", () => socket.destroy());
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
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
