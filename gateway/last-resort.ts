import type { Logger } from "../core/logger.js";

// Node's codes for a peer that went away mid-conversation, and its stream codes for writing to
// one that did.
const CONNECTION_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "ECONNABORTED",
  "ETIMEDOUT",
  "ERR_STREAM_DESTROYED",
  "ERR_STREAM_WRITE_AFTER_END",
  "ERR_STREAM_PREMATURE_CLOSE",
]);

/**
 * Whether an error concerns one client connection only: a socket error, a WebSocket protocol
 * error (ws's `WS_ERR_*`), an HTTP parse error (`HPE_*`). Losing that connection is all it costs.
 */
export function connectionScoped(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (CONNECTION_CODES.has(code) || code.startsWith("WS_ERR_") || code.startsWith("HPE_"));
}

/**
 * The server's last line of defence, for an error that escaped every handler. One scoped to a
 * connection is logged and the service keeps serving everyone else; anything else may have left
 * the process's state half-changed, so it is logged as fatal and the process exits (code 1) for
 * its supervisor to restart it (docs/operating.md, "Keeping it running").
 */
export function guardProcess(logger: Logger): void {
  let exiting = false;
  const escaped = (error: unknown, origin: string) => {
    if (connectionScoped(error)) {
      logger.error({ err: error, origin }, "an error on one connection escaped its handler; that connection is lost, the service keeps running");
      return;
    }
    if (exiting) return;
    exiting = true;
    logger.fatal({ err: error, origin }, "unexpected error: exiting, since the process state may be corrupt (a supervisor restarts it: docs/operating.md)");
    // The log line first: it may still be waiting to be written to a pipe.
    const exit = () => process.exit(1);
    if (process.stdout.writableLength === 0) return exit();
    process.stdout.once("drain", exit);
    setTimeout(exit, 1_000);
  };
  process.on("uncaughtException", (error, origin) => escaped(error, origin));
  process.on("unhandledRejection", (reason) => escaped(reason, "unhandledRejection"));
}
