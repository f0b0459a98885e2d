import { AsyncLocalStorage } from "node:async_hooks";
import type { RequestDeadline } from "./db/deadline.js";

/**
 * What code serving a request sees of it without being handed it: the request's id, which its
 * log lines carry, and its deadline, which bounds its database work. One store for both: every
 * store in use is copied into each promise the process makes, and a live turn makes dozens.
 */
export interface RequestScope {
  requestId?: string;
  deadline?: RequestDeadline;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** Runs fn as part of a request: its id and deadline are current inside it. */
export function inRequestScope<T>(scope: RequestScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/** Runs fn with a request id that every log line written inside it carries (the deadline, if any, stays). */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return scopes.run({ ...scopes.getStore(), requestId }, fn);
}

/** The id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return scopes.getStore()?.requestId;
}

/** The current request's deadline; undefined outside requests (background jobs). */
export function currentDeadline(): RequestDeadline | undefined {
  return scopes.getStore()?.deadline;
}

/** A long poll waits up to ms: its request's deadline moves out by as much. */
export function extendCurrentDeadline(ms: number): void {
  currentDeadline()?.extend(ms);
}
