import { createInterface } from "node:readline";
import { AgentlineError, RelayGaveUp } from "@agentline/sdk";

/**
 * A progress line on stderr for anything that waits (stdout stays clean for scripts). On a
 * terminal it is replaced by its outcome; elsewhere each is a line of its own.
 */
export function progress(text: string): { done(outcome?: string): void } {
  const tty = process.stderr.isTTY;
  process.stderr.write(tty ? `${text}…` : `${text}…\n`);
  return {
    done(outcome) {
      if (tty) process.stderr.write(`\r\x1b[K${outcome ? `${outcome}\n` : ""}`);
      else if (outcome) process.stderr.write(`${outcome}\n`);
    },
  };
}

/** A line for a person, on stderr, so that stdout carries only the result. */
export function note(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** The result: as JSON with --json, else as the human form given. */
export function print(json: boolean, value: unknown, human: string | string[]): void {
  const text = json ? JSON.stringify(value, null, 2) : Array.isArray(human) ? human.join("\n") : human;
  if (text) process.stdout.write(`${text}\n`);
}

/** Lines typed on the terminal or piped in; lines that arrive before they are asked for are kept. */
export function stdinLines(): { ask(prompt: string): Promise<string>; close(): void } {
  const rl = createInterface({ input: process.stdin, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  return {
    async ask(prompt) {
      process.stderr.write(prompt);
      const { value, done } = await lines.next();
      if (done) throw new CliError("no answer on standard input");
      return String(value).trim();
    },
    close: () => rl.close(),
  };
}

/** A refusal the CLI itself makes (a missing option, no key). */
export class CliError extends Error {
  override name = "CliError";
}

/** One line on stderr for what went wrong, and the exit code: 1 (2 for usage). */
export function reportFailure(error: unknown): number {
  if (error instanceof AgentlineError) {
    const fields = error.errors.map((e) => `\n  ${e.field}: ${e.message}`).join("");
    process.stderr.write(`agentline: ${error.detail} (${error.code})${fields}\n`);
    return 1;
  }
  if (error instanceof CliError || error instanceof RelayGaveUp) {
    process.stderr.write(`agentline: ${error.message}\n`);
    return error instanceof CliError ? 2 : 1;
  }
  if (error instanceof TypeError && error.message === "fetch failed") {
    const cause = (error.cause as Error | undefined)?.message ?? "";
    process.stderr.write(
      `agentline: the service does not answer (${cause}); is it running (npm start)? Set AGENTLINE_BASE_URL or --base-url if it is elsewhere.\n`,
    );
    return 1;
  }
  throw error;
}
