/**
 * What is known about the tool call or HTTP request in progress, carried
 * through its awaits (AsyncLocalStorage), so that code deep in a call (the
 * audit log's attempt record) and the request's log line can read it without
 * every signature in between passing it on.
 *
 * Only checked values are stored here: the trace context after its W3C check,
 * the client id after bearer verification.
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { TraceContext } from "../audit/trace_context.ts";

/** The scope of one tool call. */
export interface CallScope {
  /** The client's checked trace context, or null when it sent none (or an invalid one). */
  readonly trace: TraceContext | null;
}

/** The scope of one HTTP request; `clientId` is filled in once the bearer is verified. */
export interface RequestScope {
  clientId: string | null;
}

const calls = new AsyncLocalStorage<CallScope>();
const requests = new AsyncLocalStorage<RequestScope>();

/** Runs `fn` as the tool call described by `scope`. */
export function withCallScope<T>(scope: CallScope, fn: () => T): T {
  return calls.run(scope, fn);
}

/**
 * The client's checked `traceparent` of the call in progress, or null.
 *
 * @returns The `traceparent` the client sent with this call, after its W3C
 *   check; null outside a call or when it sent none (or an invalid one).
 */
export function currentTraceparent(): string | null {
  return calls.getStore()?.trace?.traceparent ?? null;
}

/** Runs `fn` as one HTTP request; the returned scope is filled in while it runs. */
export function withRequestScope<T>(scope: RequestScope, fn: () => T): T {
  return requests.run(scope, fn);
}

/**
 * Records who the request in progress authenticated as (a no-op outside a
 * request), for that request's log line.
 *
 * @param clientId The verified OAuth client id, or null when there is none.
 */
export function noteRequestClient(clientId: string | null): void {
  const scope = requests.getStore();
  if (scope !== undefined) scope.clientId = clientId;
}
