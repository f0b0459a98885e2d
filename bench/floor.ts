/**
 * The physical floor of the live turn's figures on this machine: the same shapes as bench/voice-turn.ts
 * with nothing of the service in them, so each figure of the service can be read against what the
 * machine allows at all. A server in its own process (express 5, ws, postgres.js with 10
 * connections, PostgreSQL with its default durable commit), measured by the same client code:
 *
 *   utterance → relay:  a WebSocket frame in → one row inserted and committed → a frame out
 *   push → speech:      an HTTP POST (node:http, kept alive) → one row inserted and committed → a
 *                       frame out on the call's socket, and the 200 answer
 *   GET:                one prepared SELECT by primary key answered as JSON, vs the bare hello
 *   echo:               one call at speech pace with both legs answered without the database: what
 *                       two Node processes that sat idle between turns cost each other, nothing else
 *
 * A service leg writes more than one row in its commit and runs its own code around it, so its
 * figures sit above these; a goal below the floor cannot be met on this machine by any service
 * that commits before it sends. PostgreSQL only (the service's figures that the goals are set
 * for). Usage: npm run bench. Written to floor.json in the results folder (harness/results.ts).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import WebSocket from "ws";
import { projectRoot } from "../harness/process.js";
import { writeResults } from "../harness/results.js";
import {
  adminUrl,
  GOALS,
  openConnections,
  PACE_MS,
  postJson,
  progressLog,
  reportHeader,
  requestsPerSecond,
  round,
  summary,
  TURNS_ONE,
  turnFigures,
  turnRuns,
} from "./support.js";

interface Line {
  socket: WebSocket;
  frames: string[];
  waiting?: () => void;
}

async function openLine(port: number, id: number, prefix: string): Promise<Line> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}${prefix}/line/${id}`);
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  const line: Line = { socket, frames: [] };
  socket.on("message", (data) => {
    line.frames.push(String(data));
    line.waiting?.();
  });
  return line;
}

function nextFrame(line: Line, seen: number): Promise<void> {
  if (line.frames.length > seen) return Promise.resolve();
  return new Promise((resolve) => (line.waiting = () => line.frames.length > seen && resolve()));
}

/**
 * `calls` lines taking `turns` turns of two legs each, one turn every paceMs (0: back to back).
 * Under the prefix `/echo` the server answers both legs without the database.
 */
async function measureTurns(port: number, calls: number, turns: number, paceMs: number, prefix = "") {
  const lines = await Promise.all(Array.from({ length: calls }, (_, id) => openLine(port, id, prefix)));
  await openConnections(`http://127.0.0.1:${port}/hello`, calls);
  const toRelay: number[] = [];
  const toSpeech: number[] = [];
  const started = performance.now();
  await Promise.all(
    lines.map(async (line, id) => {
      if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.random() * paceMs));
      for (let turn = 0; turn < turns; turn++) {
        const turnStarted = performance.now();
        let seen = line.frames.length;
        const t0 = performance.now();
        line.socket.send(`turn ${turn}`);
        await nextFrame(line, seen);
        toRelay.push(performance.now() - t0);
        seen = line.frames.length;
        const t1 = performance.now();
        const answer = postJson(`http://127.0.0.1:${port}${prefix}/push/${id}`, "none", { text: `answer ${turn}` });
        const speech = nextFrame(line, seen);
        if ((await answer).status !== 200) throw new Error("push failed");
        await speech;
        toSpeech.push(performance.now() - t1);
        if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.max(0, turnStarted + paceMs - performance.now())));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const line of lines) line.socket.close();
  return {
    concurrent_calls: calls,
    pace_ms: paceMs,
    turns: calls * turns,
    utterance_to_relay: summary(toRelay),
    push_to_speech: summary(toSpeech),
    turns_per_second: Math.round((calls * turns) / seconds),
  };
}

async function main() {
  const child = spawn(process.execPath, ["--import", "tsx", join(projectRoot, "bench", "floor-server.ts")], {
    cwd: projectRoot,
    env: { ...process.env, FLOOR_DATABASE_URL: adminUrl },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once("data", (data) => resolve(JSON.parse(String(data)).port));
    child.once("exit", (code) => reject(new Error(`floor server exited with ${code}`)));
  });
  try {
    const log = progressLog("floor");
    const runs = await turnRuns(log, (calls, turns, paceMs) => measureTurns(port, calls, turns, paceMs));
    const echo = await measureTurns(port, 1, TURNS_ONE, PACE_MS, "/echo");
    log("one call at speech pace, no database (echo)", echo);
    const getRow = await requestsPerSecond(`http://127.0.0.1:${port}/row`);
    const hello = await requestsPerSecond(`http://127.0.0.1:${port}/hello`);
    log("GET one row vs bare hello", { getRow, hello });
    const figures = {
      ...turnFigures(["utterance_to_relay", "push_to_speech"], runs),
      get_row_vs_bare_hello: {
        get_row_requests_per_second: getRow,
        bare_hello_requests_per_second: hello,
        share: round(getRow / hello),
        goal: GOALS.get_call_share_of_hello,
      },
      one_call_at_speech_pace_no_database_p50_ms: {
        utterance_to_relay: echo.utterance_to_relay.p50_ms,
        push_to_speech: echo.push_to_speech.p50_ms,
        goal: GOALS.one_call_p50_ms,
      },
    };
    const report = { ...reportHeader("floor"), results: { postgresql: { figures, runs: { ...runs, echo } } } };
    const file = writeResults("floor.json", report);
    process.stdout.write(`written to ${file}\n`);
  } finally {
    child.kill("SIGTERM");
  }
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
