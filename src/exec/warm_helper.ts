/**
 * A launcher helper started ahead of the call that will use it.
 *
 * Why: Deno's spawn of the helper (a fork and exec inside the runtime, on
 * the JavaScript thread) was the largest single cost on a call's path after
 * the command itself. An idle helper (`htmcp-spawn --request`) is spawned
 * while the previous call's command runs, and waits on stdin; the next call
 * writes it exactly what it would have put in argv, cwd and env (see
 * `encodeHelperRequest`), and the helper goes on as if started with them.
 * Nothing else changes: the same program (the only one Deno may run), the
 * same options, the same go byte after the attempt record is durable.
 *
 * An idle helper has run nothing and holds nothing: it waits in `read` with
 * the server's identity, no namespace yet, and every descriptor above 2
 * closed by the spawn. Letting it go (shutdown, or the server's end) closes
 * its stdin, and it exits without a word.
 *
 * @module
 */

/** The request's byte limit, as the helper's `MAX_REQUEST_BYTES`. */
export const MAX_REQUEST_BYTES = 1 << 20;
/** The helper's limit on environment entries (`MAX_REQUEST_ENV`). */
const MAX_REQUEST_ENV = 4096;

/**
 * The bytes an idle helper reads as its call: eight hex digits of length,
 * then NUL-terminated tokens: the working folder, the number of environment
 * entries, the `KEY=VALUE` entries, and the helper's arguments. Pure.
 *
 * @returns The request, or null when it cannot be said this way (a NUL in a
 *   token would split it, so the call spawns its helper as before, whose
 *   spawn refuses the NUL itself; or it is over the helper's limits).
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
  const body = new TextEncoder().encode(tokens.join("\0") + "\0");
  if (body.byteLength > MAX_REQUEST_BYTES) return null;
  const bytes = new Uint8Array(8 + body.byteLength);
  bytes.set(new TextEncoder().encode(body.byteLength.toString(16).padStart(8, "0")));
  bytes.set(body, 8);
  return bytes;
}

/** One idle helper, spawned ahead; `take` hands it to a call. */
export class WarmHelper {
  readonly #path: string;
  #idle: Deno.ChildProcess | null = null;
  #closed = false;

  /** @param path The helper (`LauncherTools.spawn`), the one program Deno may run. */
  constructor(path: string) {
    this.#path = path;
  }

  /** Whether an idle helper for `path` waits to be taken. */
  ready(path: string): boolean {
    return this.#idle !== null && path === this.#path;
  }

  /**
   * The idle helper for `path`, now the caller's (its stdin, stdout, stderr
   * and status), or null when none is ready: the caller spawns as before.
   */
  take(path: string): Deno.ChildProcess | null {
    const child = this.#idle;
    if (child === null || path !== this.#path) return null;
    this.#idle = null;
    // Idle, it must not keep a finished server alive; taken, it is a call's.
    child.ref();
    return child;
  }

  /**
   * Starts the next idle helper unless one is ready or shutdown began. Call
   * it where the server waits anyway (a command is running): the spawn
   * blocks the JavaScript thread for about a millisecond.
   */
  refill(): void {
    if (this.#idle !== null || this.#closed) return;
    try {
      const child = new Deno.Command(this.#path, {
        args: ["--request"],
        clearEnv: true,
        env: {},
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      child.unref();
      this.#idle = child;
    } catch {
      // Not fatal: the next call spawns its own helper and reports the
      // failure (missing launcher, Deno's permissions) with its result.
    }
  }

  /** Lets the idle helper go: its stdin closes, it exits having run nothing. */
  async close(): Promise<void> {
    this.#closed = true;
    const child = this.#idle;
    this.#idle = null;
    if (child === null) return;
    // Waited for now: its end must keep the event loop alive until it comes.
    child.ref();
    await child.stdin.close().catch(() => {});
    await Promise.all([
      child.stdout.cancel().catch(() => {}),
      child.stderr.cancel().catch(() => {}),
      child.status,
    ]);
  }
}
