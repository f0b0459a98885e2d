import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { Logger } from "../../core/logger.js";

/**
 * The one way the service accepts a WebSocket: each endpoint (relay, softphone, a carrier's
 * socket, any later one) takes its sockets from its own SocketAcceptor, and nothing else makes a
 * WebSocketServer (test/hostile/socket-frames.test.ts checks). Every socket accepted here has
 * its 'error' heard before the endpoint sees it: on a protocol error (a frame over maxPayload,
 * text that is not UTF-8, an unknown opcode, reserved bits, a control frame fragmented) ws then
 * closes that socket with the code the error calls for (1009, 1007, 1002), and the process, with
 * every other socket, runs on. An 'error' nobody listens for is thrown, and Node exits.
 */
export class SocketAcceptor {
  private readonly wss: WebSocketServer;

  constructor(
    private readonly endpoint: string,
    maxPayload: number,
    private readonly logger: Logger,
  ) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload });
    this.wss.on("error", (error) => logger.error({ err: error, endpoint }, "websocket server error"));
  }

  /**
   * Completes an upgrade the endpoint has checked; `opened` gets the socket, its errors handled.
   * A handshake ws refuses (a bad key or version) is answered by ws, and `opened` never runs.
   */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, opened: (ws: WebSocket) => void): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on("error", (error: Error & { code?: string }) => {
        // The client's fault, one socket's business: worth a line, not an alarm.
        this.logger.info({ endpoint: this.endpoint, code: error.code, reason: error.message }, "websocket closed on a protocol error");
      });
      try {
        opened(ws);
      } catch (error) {
        this.logger.error({ err: error, endpoint: this.endpoint }, "websocket setup failed");
        ws.close(1011, "internal error");
      }
    });
  }

  /** Closes every socket it accepted (on shutdown). */
  closeAll(): void {
    for (const client of this.wss.clients) client.close(1001, "server shutting down");
    this.wss.close();
  }
}
