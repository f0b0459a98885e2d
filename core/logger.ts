import { AsyncLocalStorage } from "node:async_hooks";
import { pino, type DestinationStream, type Logger } from "pino";

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
 * core code that never sees the request. The stdio MCP server passes stderr as destination.
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
    destination ?? pino.destination(1),
  );
}
