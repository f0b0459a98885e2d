import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

/** One frame as a hostile client writes it: every field its own, whatever RFC 6455 allows. */
export interface RawFrame {
  opcode: number;
  payload?: Buffer | string;
  fin?: boolean;
  /** The reserved bits RSV1..RSV3 as a number 0-7 (RSV1 = 4). */
  rsv?: number;
  /** Clients must mask; false sends the payload bare. */
  masked?: boolean;
  /** The length the header declares, when it should not be the payload's. */
  declaredLength?: number;
}

/** A frame's bytes. */
export function encodeFrame(frame: RawFrame): Buffer {
  const payload = typeof frame.payload === "string" ? Buffer.from(frame.payload) : (frame.payload ?? Buffer.alloc(0));
  const length = frame.declaredLength ?? payload.length;
  const masked = frame.masked ?? true;
  const head = [((frame.fin ?? true) ? 0x80 : 0) | ((frame.rsv ?? 0) << 4) | frame.opcode];
  const maskBit = masked ? 0x80 : 0;
  let extended = Buffer.alloc(0);
  if (length < 126) head.push(maskBit | length);
  else if (length < 65_536) {
    head.push(maskBit | 126);
    extended = Buffer.alloc(2);
    extended.writeUInt16BE(length);
  } else {
    head.push(maskBit | 127);
    extended = Buffer.alloc(8);
    extended.writeBigUInt64BE(BigInt(length));
  }
  if (!masked) return Buffer.concat([Buffer.from(head), extended, payload]);
  const mask = randomBytes(4);
  const body = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from(head), extended, mask, body]);
}

/** How the server ended the socket: its close frame's code and reason. */
export interface RawEnd {
  /** The close frame's status code; undefined when the connection ended without one. */
  code: number | undefined;
  reason: string;
}

/**
 * A WebSocket client over a bare TCP socket, for frames `ws` would never write: it does the
 * handshake, then writes whatever bytes it is given, and reads the server's frames.
 */
export class RawWebSocket {
  readonly texts: string[] = [];
  /** The server's close frame as it arrives (this client never answers it), or the connection's end without one. */
  readonly ended: Promise<RawEnd>;
  private buffered = Buffer.alloc(0);
  private closeFrame!: (end: RawEnd) => void;

  private constructor(
    readonly socket: Socket,
    rest: Buffer,
  ) {
    this.ended = new Promise((resolve) => {
      this.closeFrame = resolve;
      socket.once("close", () => resolve({ code: undefined, reason: "" }));
    });
    socket.on("data", (chunk: Buffer) => this.read(chunk));
    this.read(rest);
  }

  /**
   * Opens `url` (ws://host:port/path?query) with extra headers; resolves once the server switched
   * protocols, or rejects with the refusal's status and body.
   */
  static open(url: string, headers: Record<string, string> = {}, options: { localAddress?: string } = {}): Promise<RawWebSocket> {
    const target = new URL(url);
    const socket = connect({ host: target.hostname, port: Number(target.port), ...(options.localAddress ? { localAddress: options.localAddress } : {}) });
    socket.on("error", () => {});
    const request = [
      `GET ${target.pathname}${target.search} HTTP/1.1`,
      `Host: ${target.host}`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}`,
      "Sec-WebSocket-Version: 13",
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
      "",
      "",
    ].join("\r\n");
    socket.write(request);
    return new Promise((resolve, reject) => {
      let received = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const end = received.indexOf("\r\n\r\n");
        if (end < 0 || !received.subarray(0, end).toString().startsWith("HTTP/1.1 101")) return;
        socket.off("data", onData);
        socket.off("close", onClose);
        resolve(new RawWebSocket(socket, received.subarray(end + 4)));
      };
      // A refusal is a whole response, then the end of the connection.
      const onClose = () => {
        const text = received.toString();
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
        reject(Object.assign(new Error(`upgrade refused: ${status || text}`), { status, body: text.slice(text.indexOf("\r\n\r\n") + 4) }));
      };
      socket.on("data", onData);
      socket.once("close", onClose);
    });
  }

  send(frame: RawFrame): void {
    this.socket.write(encodeFrame(frame));
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Ends the connection with a TCP reset, as a client that vanishes mid-frame does. */
  reset(): void {
    this.socket.resetAndDestroy();
  }

  /** The next text frame (from `from` on) matching predicate, parsed as JSON, waiting up to ms. */
  async next(predicate: (frame: Record<string, any>) => boolean, ms = 5_000, from = 0): Promise<Record<string, any>> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.texts
        .slice(from)
        .map((text) => JSON.parse(text))
        .find(predicate);
      if (found) return found;
      if (Date.now() > deadline || this.socket.destroyed) throw new Error(`no matching frame; got ${JSON.stringify(this.texts)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  // Server frames are never masked; only text and close frames matter here.
  private read(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    for (;;) {
      if (this.buffered.length < 2) return;
      const opcode = this.buffered[0]! & 0x0f;
      let length = this.buffered[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.buffered.length < 4) return;
        length = this.buffered.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffered.length < 10) return;
        length = Number(this.buffered.readBigUInt64BE(2));
        offset = 10;
      }
      if (this.buffered.length < offset + length) return;
      const payload = this.buffered.subarray(offset, offset + length);
      this.buffered = this.buffered.subarray(offset + length);
      if (opcode === 0x1) this.texts.push(payload.toString());
      if (opcode === 0x8) this.closeFrame({ code: payload.length >= 2 ? payload.readUInt16BE(0) : undefined, reason: payload.subarray(2).toString() });
    }
  }
}
