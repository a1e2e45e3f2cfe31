/**
 * bwrap mode: one sandbox made ahead of the next call. Setting up bubblewrap
 * (namespaces, mounts, the `/etc` copies) is most of a sandboxed call's
 * time, and none of it depends on the call: its argv (`sandboxArgv`) is the
 * same for every call of an executor. So each call takes the sandbox made
 * after the one before, and once its own tree is gone, makes the next one's.
 *
 * A sandbox waiting here has run nothing of any call: its inner helper
 * waits on stdin for a request, which the call writes only at its go (once
 * its attempt record is durable), and its backstop starts only then. What
 * it fixed when it was made is what `sandboxArgv` fixes for every call (the
 * jail's bind, the identity, the network, the `/etc` copies as they were on
 * disk then); everything the call chose (command, arguments, environment,
 * working folder, rlimits) arrives with the request. The jail folder it
 * bound must still be the jail when a call takes it (`jailIdentity`).
 *
 * @module
 */
import type { CallLaunch } from "./launcher.ts";
import type { CallSinks, ServedCall, ServingHelper } from "./serving_helper.ts";

/** What a waiting sandbox may print before its call takes it: a setup failure's message. */
const EARLY_OUTPUT_BYTES = 64 * 1024;

/** Output that arrives before the call does is kept (bounded) and handed over. */
class LateSinks implements CallSinks {
  #target: CallSinks | null = null;
  #early: ["stdout" | "stderr", Uint8Array][] = [];
  #earlyBytes = 0;

  output(stream: "stdout" | "stderr", bytes: Uint8Array): void {
    if (this.#target !== null) return this.#target.output(stream, bytes);
    if (this.#earlyBytes + bytes.byteLength > EARLY_OUTPUT_BYTES) return;
    this.#earlyBytes += bytes.byteLength;
    this.#early.push([stream, bytes.slice()]);
  }

  attach(target: CallSinks): void {
    for (const [stream, bytes] of this.#early) target.output(stream, bytes);
    this.#early = [];
    this.#target = target;
  }
}

interface Waiting {
  readonly argv: readonly string[];
  /** The jail folder's identity when the sandbox was started (null: unknown). */
  readonly jail: string | null;
  readonly call: ServedCall;
  readonly sinks: LateSinks;
  ended: boolean;
}

/** The executor's sandbox made ahead (at most one at a time). */
export class SandboxAhead {
  readonly #helper: ServingHelper;
  readonly #jail: () => string | null;
  #waiting: Waiting | null = null;

  /**
   * @param helper The serving helper every call is a fork of.
   * @param jail The jail folder's identity now (`jailIdentity`), or null when
   *   it cannot be read: a sandbox binds the folder it found when it was made,
   *   so one made before the folder was replaced is never handed out.
   */
  constructor(helper: ServingHelper, jail: () => string | null) {
    this.#helper = helper;
    this.#jail = jail;
  }

  /**
   * A sandbox for `launch` (bwrap mode), its output going to `sinks`: the
   * one made ahead if it still waits and was made for the same argv, else
   * one started now. Once its tree is gone, the next one is made ahead.
   *
   * @throws What `ServingHelper.start` throws, when no sandbox can be started now.
   */
  take(launch: CallLaunch, sinks: CallSinks): ServedCall {
    const waiting = this.#waiting;
    this.#waiting = null;
    let taken: Waiting;
    if (
      waiting !== null && !waiting.ended && sameArgv(waiting.argv, launch.argv) &&
      waiting.jail !== null && waiting.jail === this.#jail()
    ) {
      taken = waiting;
    } else {
      // One that ended while waiting failed its setup long before this call
      // (or lost the helper), one made for another argv is not this call's,
      // and one made before the jail folder was replaced (moved away, a new
      // one made in its place) has the old folder bound: a call never gets a
      // stale verdict, another's sandbox, or a folder no longer the jail.
      if (waiting !== null) discard(waiting);
      taken = this.#start(launch);
    }
    taken.sinks.attach(sinks);
    // The next call's is made once this one's tree is gone, not beside it:
    // making a sandbox and tearing one down contend for the kernel's mount
    // locks, which would put the new one's setup back on this call's path.
    // (Calls sent back to back then wait for part of its setup: a second
    // one waiting was measured to gain nothing there, the machine's CPU
    // being the bound.)
    taken.call.status.then(() => this.#startAhead(launch));
    return taken.call;
  }

  #start(launch: CallLaunch): Waiting {
    const sinks = new LateSinks();
    const [, ...rest] = launch.argv;
    const call = this.#helper.start(launch.cwd, launch.env, rest, "piped", sinks);
    const waiting: Waiting = { argv: launch.argv, jail: this.#jail(), call, sinks, ended: false };
    call.status.then(() => waiting.ended = true);
    return waiting;
  }

  #startAhead(launch: CallLaunch): void {
    // At most one waits: with calls in flight, the first to end makes it.
    if (this.#waiting !== null && !this.#waiting.ended) return;
    if (this.#waiting !== null) discard(this.#waiting);
    this.#waiting = null;
    try {
      this.#waiting = this.#start(launch);
    } catch {
      // The helper cannot start one now (it is shut down, or cannot be
      // spawned): the next call starts its own and gets the reason.
    }
  }
}

/**
 * A folder's identity (device and inode), or null when it cannot be read.
 * Taken before the sandbox binds the folder and compared when a call takes
 * it: a folder renamed away keeps its inode, and the one made in its place
 * gets another.
 */
export function jailIdentity(path: string): string | null {
  try {
    const info = Deno.statSync(path);
    return info.ino === null ? null : `${info.dev}:${info.ino}`;
  } catch {
    return null;
  }
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, i) => word === b[i]);
}

function discard(waiting: Waiting): void {
  if (!waiting.ended) waiting.call.kill("SIGKILL");
  waiting.call.closeInput();
  waiting.call.drop();
}
