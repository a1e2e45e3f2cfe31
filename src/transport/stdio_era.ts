/**
 * Which protocol era a stdio connection speaks, decided by its first
 * message (the rule the SDK's own dual-era stdio entry uses): a request or
 * notification that carries the per-request protocol-version claim in
 * `_meta` opens a 2026-07-28 connection; anything else (the `initialize`
 * handshake above all) opens a 2025 one, served exactly as before. The
 * connection stays in its era for its lifetime.
 *
 * The bounded stdio transport stays the only reader and writer of the
 * pipes; each era's server is connected to a relay in front of it.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type {
  JSONRPCMessage,
  Server as ModernServer,
  Transport as ModernTransport,
} from "@modelcontextprotocol/server";
import type { BoundedStdioTransport } from "./stdio_transport.ts";

/**
 * The SDK v2's `PROTOCOL_VERSION_META_KEY`, spelled here so that deciding
 * the era does not load the v2 SDK: a 2025 connection (most clients) never
 * loads it at all. A test holds it equal to the SDK's constant.
 */
export const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";

type LegacyTransport = Parameters<McpServer["connect"]>[0];
type LegacyMessage = Parameters<LegacyTransport["send"]>[0];

/** The era a connection opened in. */
export type StdioEra = "2025" | "2026-07-28";

/** What the switch needs to serve either era. */
export interface StdioEraDeps {
  readonly transport: BoundedStdioTransport;
  /** The 2025 server (connected only if the client opens in that era). */
  readonly legacy: () => McpServer;
  /** Loads what `modern` needs (the SDK v2 server code), once; awaited before it is called. */
  readonly loadModern?: () => Promise<void>;
  /** A 2026 server instance (the SDK asks for one per connection). */
  readonly modern: () => ModernServer;
  /** Told once, when the first message has decided. */
  readonly onEra?: (era: StdioEra) => void;
  /**
   * Told when the SDK refuses a request without the protocol-version claim
   * on a 2026 connection, with the error code it answered (for the audit).
   */
  readonly onUnclaimed?: (method: string | null, code: number) => void;
}

/** The era of a connection whose first message is `message`. */
export function eraOfOpening(message: unknown): StdioEra {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return "2025";
  const record = message as { method?: unknown; params?: unknown };
  if (record.method === "initialize") return "2025";
  const params = record.params;
  if (typeof params !== "object" || params === null) return "2025";
  const meta = (params as { _meta?: unknown })._meta;
  if (typeof meta !== "object" || meta === null) return "2025";
  return typeof (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY] === "string"
    ? "2026-07-28"
    : "2025";
}

function isRequest(message: unknown): message is { id: unknown; method: unknown } {
  return typeof message === "object" && message !== null && "id" in message &&
    "method" in message;
}

/** A running switch. */
export interface StdioEraSwitch {
  /** Closes whichever era's server was started. */
  close(): Promise<void>;
}

/** Starts reading; the first message picks the era. */
export async function startStdioEras(deps: StdioEraDeps): Promise<StdioEraSwitch> {
  const transport = deps.transport;
  let closeEra: (() => Promise<void>) | null = null;
  let relay: Relay | null = null;
  let modern = false;
  transport.onmessage = (message) => {
    if (relay !== null) {
      if (modern && isRequest(message) && eraOfOpening(message) === "2025") {
        relay.watch(message.id, typeof message.method === "string" ? message.method : null);
      }
      relay.deliver(message);
      return;
    }
    const era = eraOfOpening(message);
    modern = era !== "2025";
    deps.onEra?.(era);
    const opened = new Relay(transport, deps.onUnclaimed);
    relay = opened;
    if (era === "2025") {
      const server = deps.legacy();
      closeEra = () => server.close();
      opened.deliver(message);
      void server.connect(opened).then(() => opened.ready());
    } else {
      // The relay holds what arrives while the v2 SDK loads, in order.
      opened.deliver(message);
      let handle: { close(): Promise<void> } | null = null;
      const started = (deps.loadModern?.() ?? Promise.resolve())
        .then(() => import("@modelcontextprotocol/server/stdio"))
        .then(({ serveStdio }) => {
          handle = serveStdio(() => deps.modern(), {
            transport: opened,
            // The connection opened in 2026; a 2025 handshake now is refused.
            legacy: "reject",
          });
          opened.ready();
        });
      started.catch((error) => {
        // Without its server the connection cannot be answered: end it
        // the usual way (stdin closed) rather than leave requests waiting.
        transport.onerror?.(error instanceof Error ? error : new Error(String(error)));
        void transport.close();
      });
      closeEra = async () => {
        await started.catch(() => {});
        await (handle as { close(): Promise<void> } | null)?.close();
      };
    }
  };
  await transport.start();
  return {
    close: () => closeEra?.() ?? Promise.resolve(),
  };
}

/**
 * One era's view of the bounded transport: it never starts or stops the
 * pipes on its own start, and it passes answers through the bounds.
 */
class Relay implements ModernTransport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ModernTransport["onmessage"];
  readonly #transport: BoundedStdioTransport;
  readonly #onRefused: ((method: string | null, code: number) => void) | undefined;
  /** Unclaimed requests on a 2026 connection, by id, until answered. */
  readonly #watched = new Map<unknown, string | null>();
  /** Messages read before the era's server was connected, in their order. */
  #held: unknown[] | null = [];

  constructor(
    transport: BoundedStdioTransport,
    onRefused?: (method: string | null, code: number) => void,
  ) {
    this.#transport = transport;
    this.#onRefused = onRefused;
    // Set before either SDK chains its own handler after ours.
    const previous = transport.onclose;
    transport.onclose = () => {
      previous?.();
      this.onclose?.();
    };
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Passes a message on, or holds it until {@linkcode ready}: a
   * cancellation read right behind its call must not overtake it.
   */
  deliver(message: unknown): void {
    if (this.#held !== null) this.#held.push(message);
    else this.onmessage?.(message as JSONRPCMessage);
  }

  /** The era's server is connected: passes on what was held, in order. */
  ready(): void {
    const held = this.#held ?? [];
    this.#held = null;
    for (const message of held) this.onmessage?.(message as JSONRPCMessage);
  }

  /** Watches the answer to request `id` (see `onUnclaimed`). */
  watch(id: unknown, method: string | null): void {
    this.#watched.set(id, method);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#watched.size > 0 && "id" in message && this.#watched.has(message.id)) {
      const method = this.#watched.get(message.id) ?? null;
      this.#watched.delete(message.id);
      if ("error" in message) this.#onRefused?.(method, message.error.code);
    }
    // Both SDKs' JSON-RPC message types describe the same JSON.
    return this.#transport.send(message as unknown as LegacyMessage);
  }

  close(): Promise<void> {
    return this.#transport.close();
  }
}
