/**
 * What is known about the tool call or HTTP request in progress, carried
 * through its awaits (AsyncLocalStorage), so that code deep in a call (the
 * audit log's attempt record) and the request's log line can read it without
 * every signature in between passing it on.
 *
 * Only checked values are stored here: the trace context after its W3C check,
 * the client id after bearer verification.
 *
 * `node:async_hooks` is imported by the first call or request, not with the
 * module: importing it makes Deno load part of its Node compatibility layer,
 * which a server start would pay before its first answer. Nothing can be in
 * a scope before the first scope is entered, so until then the readers
 * answer as outside one.
 *
 * @module
 */
import type { AsyncLocalStorage } from "node:async_hooks";
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

interface Scopes {
  readonly calls: AsyncLocalStorage<CallScope>;
  readonly requests: AsyncLocalStorage<RequestScope>;
}

let scopes: Scopes | null = null;
let loading: Promise<Scopes> | null = null;

function loadScopes(): Promise<Scopes> {
  loading ??= import("node:async_hooks").then(({ AsyncLocalStorage }) =>
    scopes = { calls: new AsyncLocalStorage(), requests: new AsyncLocalStorage() }
  );
  return loading;
}

/** Runs `fn` as the tool call described by `scope`. */
export async function withCallScope<T>(scope: CallScope, fn: () => T): Promise<Awaited<T>> {
  const { calls } = scopes ?? await loadScopes();
  return await calls.run(scope, fn);
}

/**
 * The client's checked `traceparent` of the call in progress, or null.
 *
 * @returns The `traceparent` the client sent with this call, after its W3C
 *   check; null outside a call or when it sent none (or an invalid one).
 */
export function currentTraceparent(): string | null {
  return scopes?.calls.getStore()?.trace?.traceparent ?? null;
}

/** Runs `fn` as one HTTP request; the returned scope is filled in while it runs. */
export async function withRequestScope<T>(
  scope: RequestScope,
  fn: () => T,
): Promise<Awaited<T>> {
  const { requests } = scopes ?? await loadScopes();
  return await requests.run(scope, fn);
}

/**
 * Records who the request in progress authenticated as (a no-op outside a
 * request), for that request's log line.
 *
 * @param clientId The verified OAuth client id, or null when there is none.
 */
export function noteRequestClient(clientId: string | null): void {
  const scope = scopes?.requests.getStore();
  if (scope !== undefined) scope.clientId = clientId;
}
