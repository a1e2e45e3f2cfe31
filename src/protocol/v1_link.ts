/**
 * An in-process JSON-RPC link to one of our 2025-era SDK servers: the
 * transport a `createMcpServer()` instance is connected to when a
 * 2026-07-28 request is served. The 2026 envelope (discover, `_meta`,
 * `resultType`, headers) is the v2 SDK's; the tools, their argument checks
 * and every refusal stay in the one server definition both eras share, so
 * neither era can drift from the other's policy.
 *
 * Deny on failure: a server-to-client request (elicitation, sampling, roots)
 * is answered with an error here, because the 2026 era has no such channel
 * (the server must ask through an `input_required` result instead), and an
 * unanswered request would hang the call.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

type Transport = Parameters<McpServer["connect"]>[0];
type Message = Parameters<Transport["send"]>[0];
type SendOptions = Parameters<Transport["send"]>[1];

/** The protocol revision the linked server is initialized at (its newest). */
export const LINKED_REVISION = "2025-11-25";

/** A JSON-RPC error the linked server answered with. */
export interface LinkError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/** What one linked request came to. */
export type LinkOutcome =
  | { readonly ok: true; readonly result: Record<string, unknown> }
  | { readonly ok: false; readonly error: LinkError };

/** Options of {@linkcode V1Link.request}. */
export interface LinkRequestOptions {
  /** Aborting it sends `notifications/cancelled` to the server. */
  readonly signal?: AbortSignal;
  /** Notifications the server relates to this request (progress). */
  readonly onNotification?: (notification: Record<string, unknown>) => void;
}

interface Pending {
  readonly resolve: (outcome: LinkOutcome) => void;
  readonly onNotification: ((notification: Record<string, unknown>) => void) | undefined;
}

/** The client side of an in-process link; connect the server to it. */
export class V1Link implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: Transport["onmessage"];

  readonly #pending = new Map<string, Pending>();
  #next = 0;
  #closed = false;
  #initialized: Promise<LinkOutcome> | null = null;

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: Message, options?: SendOptions): Promise<void> {
    const record = message as Record<string, unknown>;
    const id = record.id;
    if (typeof id === "string" && ("result" in record || "error" in record)) {
      const pending = this.#pending.get(id);
      this.#pending.delete(id);
      pending?.resolve(
        "error" in record
          ? { ok: false, error: record.error as LinkError }
          : { ok: true, result: record.result as Record<string, unknown> },
      );
      return Promise.resolve();
    }
    if (typeof record.method === "string" && id !== undefined) {
      // A request from the server to the client: the 2026 era has no such
      // channel, so it is refused rather than left to hang the tool call.
      this.#deliver({
        jsonrpc: "2.0",
        id,
        error: {
          code: -32601,
          message: `"${record.method}" cannot be sent to a 2026-07-28 client.`,
        },
      });
      return Promise.resolve();
    }
    const related = options?.relatedRequestId;
    if (related !== undefined) this.#pending.get(String(related))?.onNotification?.(record);
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    for (const pending of this.#pending.values()) {
      pending.resolve({ ok: false, error: { code: -32603, message: "The server closed." } });
    }
    this.#pending.clear();
    this.onclose?.();
    return Promise.resolve();
  }

  /**
   * Runs the 2025 handshake once, with the client's identity and
   * capabilities from the 2026 request envelope, so the server knows its
   * client as well as a 2025 session would.
   */
  initialize(clientInfo: unknown, capabilities: unknown): Promise<LinkOutcome> {
    this.#initialized ??= (async () => {
      const outcome = await this.request("initialize", {
        protocolVersion: LINKED_REVISION,
        capabilities: isRecord(capabilities) ? capabilities : {},
        clientInfo: isRecord(clientInfo) && typeof clientInfo.name === "string" &&
            typeof clientInfo.version === "string"
          ? clientInfo
          : { name: "unknown", version: "0" },
      });
      if (outcome.ok) this.#deliver({ jsonrpc: "2.0", method: "notifications/initialized" });
      return outcome;
    })();
    return this.#initialized;
  }

  /** Sends one request to the server and resolves with its answer. */
  request(
    method: string,
    params: Record<string, unknown>,
    options: LinkRequestOptions = {},
  ): Promise<LinkOutcome> {
    if (this.#closed) {
      return Promise.resolve({ ok: false, error: { code: -32603, message: "The server closed." } });
    }
    const id = `link-${++this.#next}`;
    const { promise, resolve } = Promise.withResolvers<LinkOutcome>();
    this.#pending.set(id, { resolve, onNotification: options.onNotification });
    const signal = options.signal;
    const onAbort = () => {
      if (!this.#pending.has(id)) return;
      this.#pending.delete(id);
      // The server aborts the handler's signal: a running command is killed
      // and its outcome audited as cancelled.
      this.#deliver({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason: reasonOf(signal) },
      });
      resolve({ ok: false, error: { code: -32800, message: "Request cancelled." } });
    };
    if (signal?.aborted) {
      onAbort();
      return promise;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#deliver({ jsonrpc: "2.0", id, method, params });
    return promise.finally(() => signal?.removeEventListener("abort", onAbort));
  }

  #deliver(message: Record<string, unknown>): void {
    this.onmessage?.(message as Message);
  }
}

function reasonOf(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  return reason instanceof Error
    ? reason.message
    : typeof reason === "string"
    ? reason
    : "cancelled";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
