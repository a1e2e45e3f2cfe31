/**
 * Newline-delimited JSON-RPC over stdin/stdout, with bounds the SDK's stdio
 * transport does not have:
 *
 * - A message longer than `maxMessageBytes` is skipped up to its newline and
 *   answered with a JSON-RPC error (with its id when the id can be read from
 *   the message's start); the server goes on. The SDK's transport ended the
 *   server instead.
 * - A request whose id is still in flight is refused before anything runs
 *   (the SDK would answer only the second of the two).
 * - Writes are asynchronous and queued: a client that stops reading stdout
 *   no longer freezes the whole process in a blocking write (timers, audit
 *   and signal handling go on). Once the queue holds more than
 *   `maxBacklogBytes` the client is taken to have stopped reading and the
 *   transport closes, which stops the server the usual way (running commands
 *   killed, their outcomes audited).
 *
 * Deny on failure: a line that is not a JSON-RPC message never reaches the
 * server; it is answered with a parse or invalid-request error.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { PendingRequests, requestIdOf, responseIdOf } from "./pending_requests.ts";
import { type ByteSink, SerialWrites } from "../streams/mod.ts";

type Transport = Parameters<McpServer["connect"]>[0];
type Message = Parameters<Transport["send"]>[0];

/** Limits of {@linkcode BoundedStdioTransport}. */
export interface StdioLimits {
  readonly maxMessageBytes: number;
  readonly maxBacklogBytes: number;
}

/** Where the transport writes; `Deno.stdout` in production. */
export type { ByteSink } from "../streams/mod.ts";

const NEWLINE = 0x0a;
/**
 * How long requests read before end of input may take to be answered:
 * enough for every request that runs no command and for a short command.
 * Not longer: closing stdin is how a client asks the server to stop, and the
 * SDK's clients send SIGTERM 2 s later (then SIGKILL 2 s after that), by
 * which time a running command must be killed and its outcome audited.
 */
export const END_OF_INPUT_GRACE_MS = 500;
/** How much of an oversized message is kept to find its id. */
const ID_PREFIX_BYTES = 512;

/** The stdio transport with bounded reads and writes. */
export class BoundedStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: Transport["onmessage"];
  /** Why the transport closed itself (backlog, stdout gone), once it did. */
  closeReason: string | null = null;

  readonly #input: ReadableStream<Uint8Array>;
  readonly #writes: SerialWrites;
  readonly #limits: StdioLimits;
  readonly #pending = new PendingRequests();
  readonly #encoder = new TextEncoder();
  #closed = false;
  #reader: ReadableStreamDefaultReader<Uint8Array> | null = null;

  constructor(input: ReadableStream<Uint8Array>, output: ByteSink, limits: StdioLimits) {
    this.#input = input;
    this.#writes = new SerialWrites(output, {
      onError: (error) =>
        this.#fail(`stdout cannot be written (${error instanceof Error ? error.message : error})`),
    });
    this.#limits = limits;
  }

  /** Bytes queued for stdout and not yet written. */
  get backlogBytes(): number {
    return this.#writes.backlogBytes;
  }

  start(): Promise<void> {
    void this.#readLoop();
    return Promise.resolve();
  }

  send(message: Message): Promise<void> {
    const id = responseIdOf(message);
    if (id !== null) this.#pending.settle(id);
    this.#enqueue(message);
    return Promise.resolve();
  }

  #enqueue(message: unknown): void {
    if (this.#closed) return;
    const bytes = this.#encoder.encode(`${JSON.stringify(message)}\n`);
    if (this.#writes.backlogBytes + bytes.byteLength > this.#limits.maxBacklogBytes) {
      this.#fail(
        `the client left more than ${this.#limits.maxBacklogBytes} bytes of answers unread on stdout`,
      );
      return;
    }
    this.#writes.write(bytes);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#writes.stop();
    void this.#reader?.cancel().catch(() => {});
    this.onclose?.();
    return Promise.resolve();
  }

  #fail(reason: string): void {
    this.closeReason ??= reason;
    void this.close();
  }

  async #readLoop(): Promise<void> {
    const reader = this.#input.getReader();
    this.#reader = reader;
    const max = this.#limits.maxMessageBytes;
    let parts: Uint8Array[] = [];
    let length = 0;
    // While skipping an oversized message: the start of it, to find its id.
    let skipping: Uint8Array | null = null;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || this.#closed) break;
        let chunk = value;
        for (;;) {
          const newline = chunk.indexOf(NEWLINE);
          const end = newline < 0 ? chunk.byteLength : newline;
          if (skipping === null && length + end > max) {
            skipping = concat([...parts, chunk.subarray(0, end)], ID_PREFIX_BYTES);
            parts = [];
            length = 0;
          }
          if (skipping === null) {
            parts.push(chunk.subarray(0, end));
            length += end;
          }
          if (newline < 0) break;
          if (skipping !== null) this.#refuseOversized(skipping);
          else this.#handleLine(concat(parts, length));
          skipping = null;
          parts = [];
          length = 0;
          chunk = chunk.subarray(newline + 1);
        }
      }
    } catch (error) {
      if (!this.#closed) this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    } finally {
      reader.releaseLock();
    }
    if (!this.#closed) {
      // End of input: the client is gone, or it only stopped writing (a
      // client may send its requests and close stdin at once, as a script
      // piping them does). What it sent first is answered, within a grace,
      // before the server stops; a call still running then is cancelled as
      // on any shutdown. A client that is gone fails the first write, which
      // closes at once.
      await this.#pending.drained(END_OF_INPUT_GRACE_MS);
      await this.#writes.flush(END_OF_INPUT_GRACE_MS);
    }
    void this.close();
  }

  #refuseOversized(prefix: Uint8Array): void {
    const id = idFromPrefix(new TextDecoder().decode(prefix));
    this.#error(
      id,
      -32600,
      `Invalid Request: the message is larger than ${this.#limits.maxMessageBytes} bytes; it was skipped and nothing was run.`,
    );
  }

  #handleLine(bytes: Uint8Array): void {
    const text = new TextDecoder().decode(bytes).trim();
    if (text === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.#error(null, -32700, "Parse error: the line is not JSON.");
      return;
    }
    const checked = JSONRPCMessageSchema.safeParse(parsed);
    if (!checked.success) {
      this.#error(idFromValue(parsed), -32600, "Invalid Request: not a JSON-RPC 2.0 message.");
      return;
    }
    const id = requestIdOf(checked.data);
    if (id !== null && !this.#pending.add(id)) {
      this.#error(
        id,
        -32600,
        `Invalid Request: request id ${JSON.stringify(id)} is already in flight; nothing was run.`,
      );
      return;
    }
    this.onmessage?.(checked.data);
  }

  #error(id: string | number | null, code: number, message: string): void {
    // Not through send(): this answers a message that was never registered,
    // so it must not settle a registered request that shares its id.
    this.#enqueue({ jsonrpc: "2.0", id, error: { code, message } });
  }
}

function concat(parts: readonly Uint8Array[], limit: number): Uint8Array {
  let total = 0;
  for (const part of parts) total += part.byteLength;
  const out = new Uint8Array(Math.min(total, limit));
  let offset = 0;
  for (const part of parts) {
    if (offset >= out.byteLength) break;
    const take = part.subarray(0, out.byteLength - offset);
    out.set(take, offset);
    offset += take.byteLength;
  }
  return out;
}

/** The `"id"` of a message from its first bytes, when it is there (best effort). */
function idFromPrefix(prefix: string): string | number | null {
  const match = /"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")/.exec(prefix);
  if (match === null) return null;
  const raw = match[1] as string;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === "string" || typeof value === "number" ? value : null;
  } catch {
    return null;
  }
}

function idFromValue(value: unknown): string | number | null {
  if (typeof value !== "object" || value === null) return null;
  const id = (value as Record<string, unknown>).id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
