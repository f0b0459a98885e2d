#!/usr/bin/env node
import { reportFailure } from "../cli/output.js";
import { buildProgram } from "../cli/program.js";

buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    // A bad configuration is one line naming the variable; an API refusal one line with its code;
    // anything else gets its stack.
    if ((error as Error)?.name === "ConfigError") {
      process.stderr.write(`agentline: ${(error as Error).message}\n`);
      process.exit(1);
    }
    try {
      process.exitCode = reportFailure(error);
    } catch {
      process.stderr.write(`agentline: ${(error as Error)?.stack ?? String(error)}\n`);
      process.exit(1);
    }
  });
