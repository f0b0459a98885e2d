import { spawn } from "node:child_process";
import { join } from "node:path";
import WebSocket from "ws";

/**
 * Keeps `connections` GETs of url in flight for `seconds` from a process of its own (autocannon),
 * so that the flood's client work does not slow the test's own client; resolves with the answers
 * by status class (`2xx`, `4xx`, ...).
 */
export function requestFlood(url: string, apiKey: string, connections: number, seconds: number): Promise<Record<string, number>> {
  const bin = join(import.meta.dirname, "..", "node_modules", "autocannon", "autocannon.js");
  const child = spawn(process.execPath, [bin, "-j", "-c", String(connections), "-d", String(seconds), "-H", `authorization=Bearer ${apiKey}`, url], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  return new Promise((resolve, reject) =>
    child.on("exit", () => {
      try {
        const result = JSON.parse(output) as Record<string, number>;
        resolve(Object.fromEntries(Object.entries(result).filter(([key]) => /^\dxx$/.test(key))));
      } catch (error) {
        reject(error);
      }
    }),
  );
}

/**
 * Opens one relay socket per agent, all at once, as one client would. `settled` resolves once
 * each has opened or been refused; `close` ends those open.
 */
export function socketFlood(baseUrl: string, apiKey: string, agentIds: string[]) {
  const sockets: WebSocket[] = [];
  let opened = 0;
  let refused = 0;
  const settled = Promise.all(
    agentIds.map(
      (agentId) =>
        new Promise<void>((resolve) => {
          const socket = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/v1/events/ws?agent_id=${agentId}`, {
            headers: { authorization: `Bearer ${apiKey}` },
          });
          sockets.push(socket);
          socket.once("open", () => (opened++, resolve()));
          socket.once("unexpected-response", () => (refused++, resolve()));
          socket.once("error", () => (refused++, resolve()));
        }),
    ),
  ).then(() => ({ opened, refused }));
  return { settled, close: () => sockets.forEach((socket) => socket.terminate()) };
}
