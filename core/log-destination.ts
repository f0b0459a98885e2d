/** Log bytes that may wait for a slow or absent reader before newer lines are dropped. */
const MAX_BACKLOG_BYTES = 4 * 1024 * 1024;

/** What the logger writes to: stdout or stderr (anything with write, writableLength and error events). */
export interface LogStream {
  write(chunk: string): boolean;
  readonly writableLength: number;
  on(event: "error", listener: (error: Error) => void): unknown;
}

/**
 * A log destination over stdout or stderr that can never hold the process. Writes are
 * asynchronous: a pipe nobody reads any more fills up and lines wait in memory, up to a bound,
 * past which they are dropped (and counted in a line once the reader catches up); a closed stream
 * (EPIPE) ends logging quietly. Nothing is flushed at exit: pino's own file-descriptor destination
 * writes what it holds synchronously when the process exits, which never returns on a full pipe
 * and kept the service alive past SIGTERM.
 */
export function streamDestination(stream: LogStream): { write(line: string): void } {
  let broken = false;
  let dropped = 0;
  stream.on("error", () => {
    broken = true;
  });
  return {
    write(line) {
      if (broken) return;
      if (stream.writableLength > MAX_BACKLOG_BYTES) {
        dropped++;
        return;
      }
      if (dropped > 0) {
        stream.write(
          `${JSON.stringify({ level: 40, time: new Date().toISOString(), service: "agentline", msg: `${dropped} log lines dropped: the log's reader was not keeping up` })}\n`,
        );
        dropped = 0;
      }
      stream.write(line);
    },
  };
}
