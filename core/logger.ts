import { type DestinationStream, type Logger, pino } from "pino";
import { streamDestination } from "./log-destination.js";
import { currentRequestId } from "./request-scope.js";

export type { Logger };

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
