import type { Duplex } from "node:stream";
import { limitReached } from "../../core/errors.js";

/**
 * How many WebSockets (relay and softphone) each account holds open in this process, capped at
 * ACCOUNT_MAX_SOCKETS: one account's thousands of sockets would otherwise cost every other
 * tenant (memory, heartbeats, backlog reads). Counted per process
 * (docs/decisions/0066-socket-and-connection-limits.md).
 */
export class AccountSockets {
  private readonly open = new Map<string, number>();

  constructor(private readonly max: number) {}

  /**
   * Takes one of the account's places for the upgrading connection, or throws the 429 naming
   * `account_sockets`. The place is given back when the connection closes, however the upgrade
   * ends, or sooner by the returned function (a replaced relay socket, still closing). `replacing`
   * counts the account's sockets this one will replace as it opens: a client reconnecting at the
   * limit takes over its old socket's place instead of being refused.
   */
  hold(accountId: string, connection: Duplex, replacing = 0): () => void {
    const count = this.open.get(accountId) ?? 0;
    if (count - replacing >= this.max) {
      throw limitReached(
        "account_sockets",
        this.max,
        `This account already has ${count} WebSockets open here, the most it may (ACCOUNT_MAX_SOCKETS is ${this.max}); close one first.`,
      );
    }
    this.open.set(accountId, count + 1);
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      const left = (this.open.get(accountId) ?? 1) - 1;
      if (left > 0) this.open.set(accountId, left);
      else this.open.delete(accountId);
    };
    // A client gone while its credentials were checked has already closed: no 'close' is to come.
    if (connection.closed) release();
    else connection.once("close", release);
    return release;
  }
}
