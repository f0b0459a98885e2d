/**
 * This process's open sockets by a key (an agent, a call), so one bus subscription per channel
 * hands each message to the sockets it is for: what happens on one call or agent then costs the
 * same however many the process carries.
 */
export class SocketsByKey<S> {
  private readonly byKey = new Map<string, Set<S>>();

  /** Calls fn for each socket under key (a bus message's id field: anything, compared as text). */
  each(key: unknown, fn: (socket: S) => void): void {
    this.byKey.get(String(key))?.forEach(fn);
  }

  /** Whether any socket is under key. */
  has(key: string): boolean {
    return this.byKey.has(key);
  }

  /** Calls fn for every socket. */
  all(fn: (socket: S) => void): void {
    this.byKey.forEach((sockets) => sockets.forEach(fn));
  }

  /** Adds socket under key; returns its removal. */
  track(key: string, socket: S): () => void {
    const set = this.byKey.get(key) ?? new Set<S>();
    this.byKey.set(key, set.add(socket));
    return () => {
      set.delete(socket);
      if (set.size === 0) this.byKey.delete(key);
    };
  }
}
