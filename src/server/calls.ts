/**
 * The tool calls in flight on one MCP server instance (one stdio process, one
 * HTTP session), so that something other than the client's own
 * `notifications/cancelled` can cancel them: a session DELETE, a shutdown, or
 * a client that closed the response stream its call was to be answered on.
 *
 * A cancelled call is not dropped: its command is killed through the call's
 * signal, and the tool still returns its `CANCELLED` result and writes its
 * outcome record, which the transport then delivers before it closes.
 *
 * @module
 */

/** JSON-RPC ids 1 and "1" are different requests: the key keeps the type. */
export function requestKey(id: string | number): string {
  return `${typeof id}:${String(id)}`;
}

/** The in-flight calls of one server instance. */
export class CallRegistry {
  readonly #calls = new Map<string, AbortController>();
  #closed: unknown = undefined;
  #isClosed = false;

  /** Calls in flight. */
  get size(): number {
    return this.#calls.size;
  }

  /**
   * Registers a call.
   *
   * @param id The JSON-RPC request id.
   * @param clientSignal The SDK's signal (the client's own cancellation).
   * @returns The signal the tool must obey, and `end()` for when it returned.
   */
  begin(id: string | number, clientSignal: AbortSignal): { signal: AbortSignal; end(): void } {
    const controller = new AbortController();
    const key = requestKey(id);
    if (this.#isClosed) controller.abort(this.#closed);
    else this.#calls.set(key, controller);
    return {
      signal: AbortSignal.any([clientSignal, controller.signal]),
      end: () => {
        if (this.#calls.get(key) === controller) this.#calls.delete(key);
      },
    };
  }

  /** Cancels one call; false when it is not in flight. */
  cancel(id: string | number, reason: string): boolean {
    const controller = this.#calls.get(requestKey(id));
    if (controller === undefined) return false;
    controller.abort(new Error(reason));
    return true;
  }

  /** Cancels every call in flight, and every call that begins from now on. */
  cancelAll(reason: string): void {
    this.#isClosed = true;
    this.#closed = new Error(reason);
    for (const controller of this.#calls.values()) controller.abort(this.#closed);
  }
}
