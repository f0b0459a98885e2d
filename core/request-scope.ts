import { AsyncLocalStorage } from "node:async_hooks";
import type { RequestDeadline } from "./db/deadline.js";

/**
 * What code serving a request sees of it without being handed it: the request's id, which its
 * log lines carry, its deadline, which bounds its database work, and whom it is for, whose turn
 * its embedded-database work waits for (core/db/fair-queue.ts). One store for all: every store in
 * use is copied into each promise the process makes, and a live turn makes dozens.
 */
export interface RequestScope {
  requestId?: string;
  deadline?: RequestDeadline;
  /** Whom the work is for: `account:<id>` once authenticated, `address:<ip>` before. Background work has none. */
  tenant?: string;
  /** Gives back the request's place among its account's requests in flight (a long poll counts as a wait instead). */
  leaveRequests?: () => void;
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

/**
 * Runs fn on behalf of an account: its database work takes that account's turn. For work that
 * is no request's (a relay socket's) but whose account is known.
 */
export function inAccountScope<T>(accountId: string, fn: () => T): T {
  return scopes.run({ ...scopes.getStore(), tenant: `account:${accountId}` }, fn);
}

/** The request now acts for this account (it has authenticated); `leaveRequests` gives back its place among the account's requests in flight. */
export function setScopeAccount(accountId: string, leaveRequests?: () => void): void {
  const scope = scopes.getStore();
  if (!scope) return;
  scope.tenant = `account:${accountId}`;
  scope.leaveRequests = leaveRequests;
}

/** Whom the current work is for (RequestScope.tenant); undefined in background work. */
export function currentTenant(): string | undefined {
  return scopes.getStore()?.tenant;
}

/** A long poll stops counting as a request in flight (it is counted as a wait). */
export function leaveRequestCount(): void {
  scopes.getStore()?.leaveRequests?.();
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
