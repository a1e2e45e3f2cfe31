/**
 * One launcher helper for all of a server's calls (`htmcp-spawn --serve`).
 *
 * Why: spawning the helper per call cost the server's JavaScript thread a
 * vfork and exec each time (Deno's spawn holds the event loop through it)
 * and the call a fresh exec of the helper, about 0.5 ms of CPU in all, which
 * bounds the calls per second once several are in flight. The serving helper
 * is spawned once and reads each call's argv, cwd and environment as a
 * spawn of it would (the same `parse()` in `htmcp_spawn.c`). A contained
 * call's process is its namespace's init, which the helper clones straight
 * into the new namespace (sharing its memory until the init executes the
 * helper anew, `--as-init`), so the helper is the outer of every contained
 * call at once, and the only one: the helper refuses a contained call it
 * is spawned for without `--serve` (one process level fewer per call, about
 * 1 ms on a 2-core VM, and one place for the backstop and the kill
 * requests); any other call (the startup probe) is a plain fork.
 * Either starts with descriptors 0-2 the call's own pipes and every other
 * descriptor closed. What runs is unchanged: the same program, the only one
 * Deno may run; the same arguments; the same go byte after the attempt
 * record is durable.
 *
 * The two talk in frames (a kind byte, eight hex digits of call id, eight of
 * length, the payload; `htmcp_spawn.c` lists the kinds). Output arrives as
 * frames and is handed to the call's sinks at once, from one reused read
 * buffer, so a flood costs no more memory than it did read from its own pipe.
 *
 * The serving helper runs nothing itself: it creates namespaces and forks,
 * moves bytes, keeps each call's backstop, and signals only its own
 * unreaped children. It dies with the server (parent-death
 * signal) and its calls' trees with it. Should it die first, every call in
 * flight ends as killed by SIGKILL (its tree died with it) and the next call
 * starts a new one.
 *
 * @module
 */
import { READ_BUFFER_BYTES } from "./capture.ts";

/** The request's byte limit, as the helper's `MAX_REQUEST_BYTES`. */
export const MAX_REQUEST_BYTES = 1 << 20;
/** The helper's limit on environment entries (`MAX_REQUEST_ENV`). */
const MAX_REQUEST_ENV = 4096;
/** A kind byte, eight hex digits of id, eight of length. */
export const FRAME_HEAD_BYTES = 17;
/** Input is sent in frames of at most this many bytes (the helper takes up to 1 MiB + 1). */
const INPUT_FRAME_BYTES = 256 * 1024;

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();

const KIND = {
  start: 0x52, // R
  input: 0x49, // I
  end: 0x45, // E
  signal: 0x4b, // K
  backstop: 0x42, // B
  drop: 0x44, // D
  stdout: 0x4f, // O
  stderr: 0x65, // e
  closed: 0x43, // C
  exited: 0x58, // X
} as const;

/** Thrown when a call cannot be put in a request (the helper would refuse it). */
export class UnencodableRequest extends Error {
  override readonly name = "UnencodableRequest";
  constructor() {
    super("the call's arguments or environment hold a NUL byte or exceed the launcher's limits");
  }
}

/**
 * The bytes the helper reads as a call: NUL-terminated tokens, the working
 * folder, the number of environment entries, the `KEY=VALUE` entries, and
 * the helper's arguments. Pure.
 *
 * @returns The request, or null when it cannot be said this way: a NUL in a
 *   token would split it (one argument would become two), or it is over the
 *   helper's limits.
 */
export function encodeHelperRequest(
  cwd: string,
  env: Readonly<Record<string, string>>,
  args: readonly string[],
): Uint8Array | null {
  const entries = Object.entries(env).map(([key, value]) => `${key}=${value}`);
  const tokens = [cwd, String(entries.length), ...entries, ...args];
  // A NUL would end a token early and turn one argument into two: never encoded.
  if (entries.length > MAX_REQUEST_ENV || tokens.some((token) => token.includes("\0"))) return null;
  const body = ENCODER.encode(tokens.join("\0") + "\0");
  return body.byteLength > MAX_REQUEST_BYTES ? null : body;
}

/**
 * What a sandbox made ahead reads on stdin at its go (`--inner --request`):
 * `p` or `n` (the command's stdin follows, or it reads /dev/null), eight hex
 * digits of length, then the request as `encodeHelperRequest` makes it.
 * Pure.
 *
 * @returns The bytes.
 * @throws {UnencodableRequest} When the request cannot be encoded.
 */
export function encodeSandboxRequest(
  cwd: string,
  env: Readonly<Record<string, string>>,
  args: readonly string[],
  stdin: "piped" | "null",
): Uint8Array {
  const request = encodeHelperRequest(cwd, env, args);
  if (request === null) throw new UnencodableRequest();
  const bytes = new Uint8Array(9 + request.byteLength);
  bytes[0] = stdin === "piped" ? 0x70 : 0x6e; // p, n
  writeHex(bytes, 1, request.byteLength);
  bytes.set(request, 9);
  return bytes;
}

/** One frame to the helper: its head, then `payload`. Pure. */
export function encodeFrame(kind: number, id: number, payload: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(FRAME_HEAD_BYTES + payload.byteLength);
  bytes[0] = kind;
  writeHex(bytes, 1, id);
  writeHex(bytes, 9, payload.byteLength);
  bytes.set(payload, FRAME_HEAD_BYTES);
  return bytes;
}

const HEX = ENCODER.encode("0123456789abcdef");

function writeHex(into: Uint8Array, at: number, value: number): void {
  for (let i = 7; i >= 0; i--) {
    into[at + i] = HEX[value & 0xf]!;
    value >>>= 4;
  }
}

function readHex(from: Uint8Array, at: number): number {
  let value = 0;
  for (let i = at; i < at + 8; i++) {
    const c = from[i]!;
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (digit < 0) throw new SyntaxError("The launcher helper wrote a malformed frame head.");
    value = value * 16 + digit;
  }
  return value;
}

/** Where a frame parser delivers what it reads. */
export interface FrameHandlers {
  /** A piece of a call's output, valid only during the call (the buffer is reused). */
  output(id: number, stream: "stdout" | "stderr", bytes: Uint8Array): void;
  /** A whole frame of any other kind, its payload copied. */
  frame(kind: number, id: number, payload: Uint8Array): void;
}

/**
 * Parses the helper's frames from its stdout, in whatever pieces they
 * arrive: output payloads are passed on piece by piece as they come, other
 * payloads (a few bytes) whole.
 */
export class FrameParser {
  readonly #handlers: FrameHandlers;
  readonly #head = new Uint8Array(FRAME_HEAD_BYTES);
  #headBytes = 0;
  #kind = 0;
  #id = 0;
  #left = 0;
  #small: number[] = [];

  /** @param handlers Where frames go. */
  constructor(handlers: FrameHandlers) {
    this.#handlers = handlers;
  }

  /**
   * Takes the next bytes of the stream.
   *
   * @throws {SyntaxError} When a frame head is malformed.
   */
  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.byteLength) {
      if (this.#headBytes < FRAME_HEAD_BYTES) {
        const take = Math.min(FRAME_HEAD_BYTES - this.#headBytes, chunk.byteLength - at);
        this.#head.set(chunk.subarray(at, at + take), this.#headBytes);
        this.#headBytes += take;
        at += take;
        if (this.#headBytes < FRAME_HEAD_BYTES) return;
        this.#kind = this.#head[0]!;
        this.#id = readHex(this.#head, 1);
        this.#left = readHex(this.#head, 9);
        this.#small = [];
        if (this.#left === 0) this.#finish();
        continue;
      }
      const take = Math.min(this.#left, chunk.byteLength - at);
      const piece = chunk.subarray(at, at + take);
      at += take;
      this.#left -= take;
      if (this.#kind === KIND.stdout || this.#kind === KIND.stderr) {
        this.#handlers.output(this.#id, this.#kind === KIND.stdout ? "stdout" : "stderr", piece);
      } else if (this.#small.length + take > 64) {
        throw new SyntaxError("The launcher helper wrote an oversized control frame.");
      } else {
        for (const byte of piece) this.#small.push(byte);
      }
      if (this.#left === 0) this.#finish();
    }
  }

  #finish(): void {
    this.#headBytes = 0;
    if (this.#kind !== KIND.stdout && this.#kind !== KIND.stderr) {
      this.#handlers.frame(this.#kind, this.#id, new Uint8Array(this.#small));
    }
  }
}

/** Where a call's output goes, as it arrives. */
export interface CallSinks {
  /** Takes a piece of output; it must copy what it keeps (the buffer is reused). */
  output(stream: "stdout" | "stderr", bytes: Uint8Array): void;
}

/** One call running in the serving helper: a fork of it, with its own pipes. */
export interface ServedCall {
  /** Its end: what `Deno.ChildProcess.status` would have said of a spawned helper. */
  readonly status: Promise<Deno.CommandStatus>;
  /** Settles once both output streams have ended (or were dropped). */
  readonly drained: Promise<void>;
  /**
   * True once the serving helper itself ended before this call did: the
   * call's tree died with it (its status then says SIGKILL).
   */
  readonly helperLost: boolean;
  /** Queues bytes for the call's stdin. */
  write(bytes: Uint8Array): void;
  /** Ends the call's stdin. */
  closeInput(): void;
  /**
   * Stops the call: SIGALRM is the polite request, SIGKILL the last resort.
   * The helper SIGKILLs a contained call's init for either (its whole
   * namespace with it), and passes the signal on to a plain fork.
   */
  kill(signal: "SIGALRM" | "SIGKILL"): void;
  /** Starts the backstop of a call made ahead (`--backstop-at-go`): `ms` from now. */
  startBackstop(ms: number): void;
  /** Stops reading its output: `drained` settles now. */
  drop(): void;
}

interface Running {
  readonly sinks: CallSinks;
  streamsOpen: number;
  exited: boolean;
  helperLost: boolean;
  resolveStatus(status: Deno.CommandStatus): void;
  resolveDrained(): void;
}

const SIGNAL_NUMBERS = { SIGALRM: 14, SIGKILL: 9 } as const;

/** Names of the signals a call's process can end by, as Deno reports them. */
const SIGNAL_NAMES: Readonly<Record<number, Deno.Signal>> = {
  1: "SIGHUP",
  2: "SIGINT",
  3: "SIGQUIT",
  4: "SIGILL",
  5: "SIGTRAP",
  6: "SIGABRT",
  7: "SIGBUS",
  8: "SIGFPE",
  9: "SIGKILL",
  10: "SIGUSR1",
  11: "SIGSEGV",
  12: "SIGUSR2",
  13: "SIGPIPE",
  14: "SIGALRM",
  15: "SIGTERM",
};

/** A wait status as Deno reports a child's end. Pure. */
export function commandStatus(waitStatus: number): Deno.CommandStatus {
  const signal = waitStatus & 0x7f;
  if (signal === 0) {
    const code = (waitStatus >> 8) & 0xff;
    return { success: code === 0, code, signal: null };
  }
  return { success: false, code: 128 + signal, signal: SIGNAL_NAMES[signal] ?? "SIGKILL" };
}

/** How much of the serving helper's own stderr is read for its first line. */
const LAST_WORDS_BYTES = 4096;

/**
 * The first line of `stream` (at most LAST_WORDS_BYTES), or null when it
 * ends empty; the rest is read and dropped, so the writer never blocks.
 */
async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string | null> {
  const decoder = new TextDecoder();
  let text = "";
  try {
    for await (const chunk of stream) {
      if (text.length < LAST_WORDS_BYTES) text += decoder.decode(chunk, { stream: true });
    }
  } catch {
    // A read error ends what there is to say.
  }
  const line = text.slice(0, LAST_WORDS_BYTES).split("\n", 1)[0]!.trim();
  return line === "" ? null : line;
}

/** How a call ends when the serving helper died under it: its tree died with it. */
const HELPER_DIED: Deno.CommandStatus = { success: false, code: 137, signal: "SIGKILL" };

/**
 * The serving helper: spawned at its first call (the executor's startup
 * probe), spawned again at the next call should it die.
 */
export class ServingHelper {
  readonly #path: string;
  #child: Deno.ChildProcess | null = null;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #ended: Promise<void> = Promise.resolve();
  readonly #calls = new Map<number, Running>();
  #nextId = 1;
  #closed = false;
  #lastWords: string | null = null;

  /** @param path The helper (`LauncherTools.spawn`), the one program Deno may run. */
  constructor(path: string) {
    this.#path = path;
  }

  /** The serving helper's pid while it runs, else null. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  /**
   * The first line the last serving helper to end wrote to its own stderr
   * (why it could not serve, such as no `/proc`), or null.
   */
  get lastWords(): string | null {
    return this.#lastWords;
  }

  /** The helper this serves: a call for another program is not one it can start. */
  get path(): string {
    return this.#path;
  }

  /**
   * Starts a call: the helper creates its process, which runs as if
   * spawned with `args` in `cwd` with exactly `env`.
   *
   * @param stdin "piped": the call's stdin is fed by `write`; "null": /dev/null.
   * @throws {UnencodableRequest} When the call cannot be put in a request.
   * @throws {Deno.errors.NotCapable | Deno.errors.NotFound | Error} When the
   *   serving helper cannot be spawned (as a spawn of the helper would throw).
   */
  start(
    cwd: string,
    env: Readonly<Record<string, string>>,
    args: readonly string[],
    stdin: "piped" | "null",
    sinks: CallSinks,
  ): ServedCall {
    const request = encodeHelperRequest(cwd, env, args);
    if (request === null) throw new UnencodableRequest();
    if (this.#closed) throw new Error("the executor is shut down");
    const writer = this.#ensure();
    const id = this.#allocate();
    let resolveStatus!: (status: Deno.CommandStatus) => void;
    let resolveDrained!: () => void;
    const status = new Promise<Deno.CommandStatus>((resolve) => resolveStatus = resolve);
    const drained = new Promise<void>((resolve) => resolveDrained = resolve);
    const running: Running = {
      sinks,
      streamsOpen: 2,
      exited: false,
      helperLost: false,
      resolveStatus,
      resolveDrained,
    };
    this.#calls.set(id, running);
    const payload = new Uint8Array(1 + request.byteLength);
    payload[0] = stdin === "piped" ? 0x70 : 0x6e; // p, n
    payload.set(request, 1);
    this.#send(writer, encodeFrame(KIND.start, id, payload));
    const send = (kind: number, bytes: Uint8Array) => {
      if (this.#writer === writer && this.#calls.get(id) === running) {
        this.#send(writer, encodeFrame(kind, id, bytes));
      }
    };
    return {
      status,
      drained,
      get helperLost() {
        return running.helperLost;
      },
      write(bytes) {
        for (let at = 0; at < bytes.byteLength; at += INPUT_FRAME_BYTES) {
          send(KIND.input, bytes.subarray(at, at + INPUT_FRAME_BYTES));
        }
      },
      closeInput: () => send(KIND.end, new Uint8Array()),
      kill: (signal) => send(KIND.signal, ENCODER.encode(String(SIGNAL_NUMBERS[signal]))),
      startBackstop: (ms) =>
        send(KIND.backstop, ENCODER.encode(String(Math.max(1, Math.round(ms))))),
      drop: () => {
        send(KIND.drop, new Uint8Array());
        running.streamsOpen = 0;
        resolveDrained();
        if (running.exited) this.#calls.delete(id);
      },
    };
  }

  /** Lets the helper go: its stdin closes, it kills what still runs and exits. */
  async close(): Promise<void> {
    this.#closed = true;
    const writer = this.#writer;
    if (writer !== null) {
      this.#child?.ref();
      await writer.close().catch(() => {});
    }
    await this.#ended;
  }

  #allocate(): number {
    do this.#nextId = this.#nextId >= 0xffffffff ? 1 : this.#nextId + 1; while (
      this.#calls.has(this.#nextId)
    );
    return this.#nextId;
  }

  #send(writer: WritableStreamDefaultWriter<Uint8Array>, bytes: Uint8Array): void {
    // A failed write means the helper is gone: its end is handled by the reader.
    writer.write(bytes).catch(() => {});
  }

  #ensure(): WritableStreamDefaultWriter<Uint8Array> {
    if (this.#writer !== null) return this.#writer;
    const child = new Deno.Command(this.#path, {
      args: ["--serve"],
      clearEnv: true,
      env: {},
      // Not the server's working folder, which may be removed under it.
      cwd: "/",
      stdin: "piped",
      stdout: "piped",
      // Its own stderr says only why it could not serve (its calls have
      // pipes of their own): kept for the startup probe's refusal.
      stderr: "piped",
    }).spawn();
    // Idle, it must not keep a finished server alive; a call in flight has
    // its own timers that do.
    child.unref();
    const writer = child.stdin.getWriter();
    this.#child = child;
    this.#writer = writer;
    const words = firstLine(child.stderr);
    this.#ended = this.#read(child, writer, words).finally(() => {
      writer.releaseLock();
      child.stdin.close().catch(() => {});
    });
    return writer;
  }

  async #read(
    child: Deno.ChildProcess,
    writer: WritableStreamDefaultWriter<Uint8Array>,
    words: Promise<string | null>,
  ): Promise<void> {
    const calls = this.#calls;
    const parser = new FrameParser({
      output(id, stream, bytes) {
        const running = calls.get(id);
        if (running !== undefined && running.streamsOpen > 0) running.sinks.output(stream, bytes);
      },
      frame(kind, id, payload) {
        const running = calls.get(id);
        if (running === undefined) return;
        if (kind === KIND.closed) {
          if (running.streamsOpen > 0 && --running.streamsOpen === 0) running.resolveDrained();
        } else if (kind === KIND.exited) {
          running.exited = true;
          running.resolveStatus(commandStatus(Number(DECODER.decode(payload))));
        }
        // Forgotten once reaped with both streams ended, as the helper forgets it.
        if (running.exited && running.streamsOpen === 0) calls.delete(id);
      },
    });
    const reader = child.stdout.getReader({ mode: "byob" });
    let buffer = new Uint8Array(READ_BUFFER_BYTES);
    try {
      while (true) {
        const { done, value } = await reader.read(buffer);
        if (done || value === undefined) break;
        parser.push(value);
        buffer = new Uint8Array(value.buffer, 0, value.buffer.byteLength);
      }
    } catch {
      // A malformed frame or a read error: the helper is of no further use.
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    } finally {
      reader.releaseLock();
    }
    await child.status;
    // Before any call hears of the end, so whoever reads it can say why.
    this.#lastWords = await words;
    // Forgotten before any call hears of its end: a call started from such
    // an end (the next sandbox made ahead) must start a new helper, not
    // write to this dead one's stdin and wait forever.
    if (this.#writer === writer) {
      this.#writer = null;
      this.#child = null;
    }
    // Every call still here lost its tree with the helper (parent-death signal).
    for (const [id, running] of calls) {
      calls.delete(id);
      running.helperLost = true;
      running.streamsOpen = 0;
      running.resolveDrained();
      running.resolveStatus(HELPER_DIED);
    }
  }
}
