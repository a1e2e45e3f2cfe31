/**
 * Every timer of the server, on one scheduler over the runtime's own timers.
 *
 * Why not `setTimeout`: in Deno 2.9 the global `setTimeout` and
 * `setInterval` are Node's. Their first use loads Node's timers module and a
 * dozen Node internals behind it (async hooks, errors, inspect, util, uv):
 * 10 to 15 ms of a cold start and 1.1 to 1.4 MiB of idle RSS, measured on the
 * installed server.
 *
 * How: the pending timers wait in one min-heap by deadline. A wake runs
 * whatever is due and arms the next, for the earliest deadline. A wake is
 * `Atomics.waitAsync` on a cell nobody changes or notifies, with the wait as
 * its timeout: V8 settles it "timed-out" when the wait is over, through the
 * runtime's event loop, which it never holds open (about 25 µs of CPU a
 * wake, against 35 for a Node timer and 55 for an `AbortSignal.timeout`,
 * whose abort builds a `DOMException` and dispatches an event; measured). A
 * wait cannot be called off, so a timer cancelled before its wake leaves
 * that wake to find nothing due; a new wake is armed only when a timer is
 * due before every wake already armed, and waits of 128 ms and more end on
 * a coarse grid (`wakeTime`) so that calls made close together share theirs.
 *
 * Keeping the process alive: while any pending timer asks to (the default,
 * as `setTimeout`), one hold signal, an `AbortSignal.timeout` of the longest
 * wait, has an `abort` listener; when none does (`keepAlive: false`, as
 * `Deno.unrefTimer`: the watchers and sweepers that must not keep a
 * finished server running), it has none. Deno holds the event loop open for
 * such a signal's timer exactly while it has an `abort` listener added
 * through the signal's own `addEventListener`; the tests of this module hold
 * both rules (the hold's and the wake's) in child processes.
 *
 * @module
 */

/** The longest single wait of a runtime timer; longer waits are chained. */
const MAX_WAIT_MS = 2_147_483_647;

/** A scheduled timer. */
export interface Timer {
  /** Stops the timer: its callback is not called again. A no-op once a one-shot timer ran. */
  cancel(): void;
}

/** How a timer treats the process's lifetime. */
export interface TimerOptions {
  /**
   * True (the default): the process stays alive while the timer is pending,
   * as with `setTimeout`. False: it does not, as after `Deno.unrefTimer`.
   */
  readonly keepAlive?: boolean;
}

type State = "queued" | "due" | "done";

interface Entry {
  deadline: number;
  seq: number;
  /** Its place in the heap while queued. */
  index: number;
  state: State;
  readonly fire: () => void;
  readonly keepAlive: boolean;
  /** The interval of a repeating timer, else null. */
  readonly period: number | null;
}

/**
 * When the wake for `deadline` runs. A wait under 128 ms: at the deadline.
 * A longer one: on a grid of a power of two of milliseconds, no coarser
 * than 1/64 of the wait and than `MAX_GRID_MS`, so a timer runs at most that
 * late (a 3 s guard by up to 32 ms; a command's timeout by far less than
 * the helper's 2 s backstop behind it) and the timers of calls made close
 * together share one wake. Without the grid each call's cancelled guard and
 * timeout left a runtime timer of its own to run empty later: four wakes per
 * call, 70 % of them empty, measured, and 0.3 ms more CPU per call than
 * Node's timers.
 */
export function wakeTime(deadline: number, now: number): number {
  const wait = deadline - now;
  if (wait < 128) return deadline;
  const grid = Math.min(MAX_GRID_MS, 2 ** Math.floor(Math.log2(wait / 64)));
  return Math.ceil(deadline / grid) * grid;
}

/** The coarsest grid a wake is put on: the most any timer runs late. */
const MAX_GRID_MS = 32;

/** Milliseconds as `setTimeout` reads them: not a finite number or negative is 0. */
function delayOf(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** The cell every wake waits on: never changed, never notified. */
const CELL = new Int32Array(new SharedArrayBuffer(4));

/** The shortest wait a wake is given: a positive timeout makes `waitAsync` end in a later turn. */
const MIN_WAIT_MS = 0.001;

/** One scheduler; the process has one (below), tests make their own. */
export class Scheduler {
  readonly #heap: Entry[] = [];
  /** How long the hold signal waits before it is renewed. */
  readonly #holdMs: number;
  #seq = 0;
  /** Pending timers that keep the process alive. */
  #holders = 0;
  /** Deadlines of the wakes armed and not yet run, earliest first. */
  readonly #wakes: number[] = [];
  #hold: AbortSignal | null = null;
  #holding = false;
  readonly #held = () => {
    // The hold's own wait ran out (after about 24.8 days) while holding: a new one holds on.
    this.#hold = null;
    this.#holding = false;
    this.#updateHold();
  };

  /** @param holdMs How long each hold signal lasts (tests shorten it). */
  constructor(holdMs: number = MAX_WAIT_MS) {
    this.#holdMs = holdMs;
  }

  /** Pending timers, for tests that check nothing was left behind. */
  get pending(): number {
    return this.#heap.length;
  }

  schedule(ms: number, fire: () => void, period: number | null, keepAlive: boolean): Timer {
    const entry: Entry = {
      deadline: performance.now() + delayOf(ms),
      seq: this.#seq++,
      index: -1,
      state: "queued",
      fire,
      keepAlive,
      period,
    };
    this.#push(entry);
    if (keepAlive) this.#holders++;
    this.#updateHold();
    this.#arm();
    // The caller gets the cancel only: the entry's deadline and place are the heap's.
    return Object.freeze({ cancel: () => this.#cancel(entry) });
  }

  #cancel(entry: Entry): void {
    if (entry.state === "done") return;
    if (entry.state === "queued") this.#remove(entry);
    entry.state = "done";
    if (entry.keepAlive) this.#holders--;
    this.#updateHold();
  }

  #updateHold(): void {
    const want = this.#holders > 0;
    if (want === this.#holding) return;
    this.#holding = want;
    if (want) {
      // A hold whose wait ran out while nothing was held cannot hold again.
      if (this.#hold === null || this.#hold.aborted) this.#hold = AbortSignal.timeout(this.#holdMs);
      // The signal's own method: the runtime keeps the event loop alive for it.
      this.#hold.addEventListener("abort", this.#held);
    } else {
      // Its last listener gone, the runtime lets the hold's timer go unref'd.
      this.#hold!.removeEventListener("abort", this.#held);
    }
  }

  /** Arms a wake for the earliest deadline unless one armed already serves it. */
  #arm(): void {
    const first = this.#heap[0];
    if (first === undefined) return;
    const now = performance.now();
    const at = wakeTime(first.deadline, now);
    const earliestWake = this.#wakes[0];
    if (earliestWake !== undefined && earliestWake <= at) return;
    const wait = Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, at - now));
    let place = 0;
    while (place < this.#wakes.length && this.#wakes[place]! <= at) place++;
    this.#wakes.splice(place, 0, at);
    const waited = Atomics.waitAsync(CELL, 0, 0, wait);
    // Always asynchronous here (the cell holds 0, the timeout is positive);
    // a synchronous answer would still wake, if only a microtask later.
    const over = waited.async ? waited.value : Promise.resolve(waited.value);
    over.then(() => this.#wake(at));
  }

  #wake(at: number): void {
    const place = this.#wakes.indexOf(at);
    if (place !== -1) this.#wakes.splice(place, 1);
    const now = performance.now();
    // What is due now; a timer these callbacks schedule waits for a later
    // wake, as a new `setTimeout(fn, 0)` waits for the next turn.
    const due: Entry[] = [];
    while (this.#heap.length > 0 && this.#heap[0]!.deadline <= now) {
      const entry = this.#pop();
      entry.state = "due";
      due.push(entry);
    }
    for (const entry of due) {
      // A callback before this one may have cancelled it.
      if (entry.state !== "due") continue;
      if (entry.period === null) {
        entry.state = "done";
        if (entry.keepAlive) this.#holders--;
      } else {
        entry.deadline = now + entry.period;
        entry.seq = this.#seq++;
        entry.state = "queued";
        this.#push(entry);
      }
      try {
        entry.fire();
      } catch (error) {
        // As a throwing `setTimeout` callback: uncaught, the others still run.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
    this.#updateHold();
    this.#arm();
  }

  // ---- the min-heap, ordered by deadline, then by when it was scheduled ----

  #before(a: Entry, b: Entry): boolean {
    return a.deadline < b.deadline || (a.deadline === b.deadline && a.seq < b.seq);
  }

  #place(entry: Entry, index: number): void {
    this.#heap[index] = entry;
    entry.index = index;
  }

  #push(entry: Entry): void {
    this.#place(entry, this.#heap.length);
    this.#up(entry.index);
  }

  #pop(): Entry {
    const first = this.#heap[0]!;
    this.#remove(first);
    return first;
  }

  #remove(entry: Entry): void {
    const index = entry.index;
    const last = this.#heap.pop()!;
    entry.index = -1;
    if (last === entry) return;
    this.#place(last, index);
    this.#up(index);
    this.#down(last.index);
  }

  #up(index: number): void {
    const heap = this.#heap;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.#before(heap[index]!, heap[parent]!)) return;
      const moved = heap[parent]!;
      this.#place(heap[index]!, parent);
      this.#place(moved, index);
      index = parent;
    }
  }

  #down(index: number): void {
    const heap = this.#heap;
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let least = index;
      if (left < heap.length && this.#before(heap[left]!, heap[least]!)) least = left;
      if (right < heap.length && this.#before(heap[right]!, heap[least]!)) least = right;
      if (least === index) return;
      const moved = heap[least]!;
      this.#place(heap[index]!, least);
      this.#place(moved, index);
      index = least;
    }
  }
}

/** The process's (the isolate's) one scheduler. */
const scheduler = new Scheduler();

/**
 * Calls `fire` once, `ms` milliseconds from now (not a finite number or
 * negative: at the next turn).
 *
 * @example A timeout cancelled when the work ends first
 * ```ts
 * import { after } from "./mod.ts";
 *
 * const timeout = after(5_000, () => console.log("too slow"));
 * await Promise.resolve("the work");
 * timeout.cancel();
 * ```
 */
export function after(ms: number, fire: () => void, options: TimerOptions = {}): Timer {
  return scheduler.schedule(ms, fire, null, options.keepAlive ?? true);
}

/**
 * Calls `fire` every `ms` milliseconds (at least 1) until cancelled, the
 * next call counted from the start of the one before.
 */
export function every(ms: number, fire: () => void, options: TimerOptions = {}): Timer {
  const period = Math.max(1, delayOf(ms));
  return scheduler.schedule(period, fire, period, options.keepAlive ?? true);
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number, options: TimerOptions = {}): Promise<void> {
  return new Promise((resolve) => after(ms, resolve, options));
}

/** How many timers wait for their deadline (neither run nor cancelled). */
export function pendingTimers(): number {
  return scheduler.pending;
}
