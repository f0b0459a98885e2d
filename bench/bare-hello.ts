/**
 * The yardstick for the API figure of bench/voice-turn.ts: a bare express 5 app answering one
 * JSON hello, in its own process like the service. Prints its port on stdout.
 */
import express from "express";

const app = express();
app.get("/hello", (_req, res) => {
  res.json({ hello: "world" });
});
const server = app.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
