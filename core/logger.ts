import { AsyncLocalStorage } from "node:async_hooks";
import { pino, type DestinationStream, type Logger } from "pino";
import { streamDestination } from "./log-destination.js";

export type { Logger };

const requestScope = new AsyncLocalStorage<{ requestId: string }>();

/** Runs fn with a request id that every log line written inside it carries. */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return requestScope.run({ requestId }, fn);
}

/** The id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return requestScope.getStore()?.requestId;
}

/**
 * The service logger. Lines written while serving a request carry its `request_id`, even from
 * core code that never sees the request. Lines go to stdout (the stdio MCP server passes stderr)
 * through a destination that never blocks the process, whatever happens to its reader.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: "agentline" },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin() {
        const requestId = currentRequestId();
        return requestId ? { request_id: requestId } : {};
      },
    },
    destination ?? streamDestination(process.stdout),
  );
}
