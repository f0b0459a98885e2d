/**
 * The server of bench/floor.ts: the least a process can do for each figure of the live turn (one
 * durable insert per leg, one prepared select per GET) in express 5, ws and postgres.js, as the
 * service uses them. Prints its port on stdout.
 */
import { createServer } from "node:http";
import express from "express";
import postgres from "postgres";
import { type WebSocket, WebSocketServer } from "ws";

const sql = postgres(process.env.FLOOR_DATABASE_URL!, { max: 10, onnotice: () => {} });
// Tables of their own in the bench database, dropped when the server stops.
await sql`create table if not exists floor_lines (id bigserial primary key, line text not null, text text not null, created_at timestamptz not null default now())`;
await sql`create table if not exists floor_rows (id text primary key, body jsonb not null)`;
await sql`insert into floor_rows values ('call_1', ${sql.json({ status: "in-progress", from_number: "+14155550100", to_number: "+14155550142" })}) on conflict do nothing`;

const sockets = new Map<string, WebSocket>();
const record = (line: string, text: string) => sql`insert into floor_lines (line, text) values (${line}, ${text})`;

const app = express();
app.get("/hello", (_req, res) => {
  res.json({ hello: "world" });
});
app.get("/row", async (_req, res) => {
  const [row] = await sql`select id, body from floor_rows where id = ${"call_1"}`;
  res.json(row);
});
app.post("/push/:line", express.json(), async (req, res) => {
  const line = String(req.params.line);
  await record(line, String(req.body.text));
  sockets.get(line)?.send(JSON.stringify({ type: "speech", text: req.body.text }));
  res.json({ spoken: true });
});
// The same two legs with no database at all: what two idle processes cost each other.
app.post("/echo/push/:line", express.json(), (req, res) => {
  sockets.get(`echo/${req.params.line}`)?.send(JSON.stringify({ type: "speech", text: req.body.text }));
  res.json({ spoken: true });
});

const server = createServer(app);
const wss = new WebSocketServer({ server });
wss.on("connection", (socket, req) => {
  const echo = req.url!.startsWith("/echo/");
  const line = req.url!.split("/").pop()!;
  sockets.set(echo ? `echo/${line}` : line, socket);
  socket.on("message", async (data) => {
    if (!echo) await record(line, String(data));
    socket.send(JSON.stringify({ type: "utterance", text: String(data) }));
  });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 })}\n`);
});
process.on("SIGTERM", async () => {
  await sql`drop table if exists floor_lines, floor_rows`;
  await sql.end();
  process.exit(0);
});
