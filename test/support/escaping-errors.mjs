// Preloaded into a service process (node --import) by test/hostile/process.test.ts: each signal
// raises an error that no handler takes, as a bug would.
import { Socket } from "node:net";

// SIGUSR2: a socket's 'error' that nobody listens for, thrown from emit: an uncaught exception
// scoped to one connection.
process.on("SIGUSR2", () => {
  setImmediate(() => new Socket().emit("error", Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", syscall: "read" })));
});

// SIGWINCH: a WebSocket protocol error in a promise nobody awaits: an unhandled rejection, also
// scoped to one connection.
process.on("SIGWINCH", () => {
  void Promise.reject(Object.assign(new RangeError("Invalid WebSocket frame: invalid UTF-8 sequence"), { code: "WS_ERR_INVALID_UTF8" }));
});

// SIGHUP: a plain bug; after it, nothing says the process's state is sound.
process.on("SIGHUP", () => {
  setImmediate(() => {
    throw new TypeError("Cannot read properties of undefined (reading 'balance')");
  });
});
