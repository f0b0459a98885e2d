#!/usr/bin/env node
import { reportFailure } from "../cli/output.js";
import { buildProgram } from "../cli/program.js";
import { describeStartupError, wantsStack } from "./startup-errors.js";

buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    // An API refusal is one line with its code (cli/output.ts); anything else, a failed start
    // included, is one line naming the cause (bin/startup-errors.ts), with the stack only when
    // LOG_LEVEL asks for it.
    try {
      process.exitCode = reportFailure(error);
    } catch {
      process.stderr.write(`agentline: ${describeStartupError(error, process.env)}\n`);
      if (wantsStack(process.env) && error instanceof Error) process.stderr.write(`${error.stack}\n`);
      process.exit(1);
    }
  });
