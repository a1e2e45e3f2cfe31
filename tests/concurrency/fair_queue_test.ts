/**
 * The fair queue in front of the concurrency caps: round-robin across
 * callers, bounded in length and time, cancellable without leaking a slot.
 * Order is asserted structurally (which call got the slot when), never by
 * timing; the wait bound is short and only decides BUSY versus a slot.
 */
import assert from "node:assert/strict";
import { type AcquireResult, ConcurrencyLimiter } from "../../src/concurrency/mod.ts";

const LONG = { max: 64, waitMs: 60_000 };

function granted(result: AcquireResult): () => void {
  assert.ok(result.ok, result.ok ? "" : result.reason);
  return result.release;
}

/** Queues `count` calls for `key`, recording into `order` when each gets its slot. */
function queue(
  limiter: ConcurrencyLimiter,
  key: string | null,
  count: number,
  order: string[],
  releases: Array<() => void>,
  keyCap = 64,
): Promise<AcquireResult>[] {
  return Array.from({ length: count }, (_, index) =>
    limiter.acquire(key, keyCap).then((result) => {
      if (result.ok) {
        order.push(`${key}${index}`);
        releases.push(result.release);
      }
      return result;
    }));
}

/** Frees the oldest held slot and lets the granted call's continuation run. */
async function releaseOne(releases: Array<() => void>): Promise<void> {
  const release = releases.shift();
  assert.ok(release !== undefined, "a slot is held");
  release();
  await Promise.resolve();
  await Promise.resolve();
}

Deno.test("a flood from one caller does not starve another: slots alternate round-robin", async () => {
  const limiter = new ConcurrencyLimiter(1, LONG);
  const releases: Array<() => void> = [granted(limiter.tryAcquire("flood", 64))];
  const order: string[] = [];
  const flood = queue(limiter, "flood", 6, order, releases);
  const other = queue(limiter, "other", 2, order, releases);
  assert.equal(limiter.waiting, 8);
  for (let step = 0; step < 8; step++) await releaseOne(releases);
  await Promise.all([...flood, ...other]);
  // The other caller's two calls come second and fourth, not after the flood's six.
  assert.deepEqual(order, [
    "flood0",
    "other0",
    "flood1",
    "other1",
    "flood2",
    "flood3",
    "flood4",
    "flood5",
  ]);
  assert.equal(limiter.waiting, 0);
});

Deno.test("the round-robin skips a caller at its own cap and serves it when its slot frees", async () => {
  const limiter = new ConcurrencyLimiter(2, LONG);
  const heldByA = granted(limiter.tryAcquire("a", 1));
  const heldByB = granted(limiter.tryAcquire("b", 2));
  const order: string[] = [];
  const releases: Array<() => void> = [];
  const a = queue(limiter, "a", 1, order, releases, 1);
  const b = queue(limiter, "b", 1, order, releases, 2);
  // b's own slot frees: a is first in line but at its cap of 1, so b's call goes.
  heldByB();
  await Promise.resolve();
  await Promise.resolve();
  assert.deepEqual(order, ["b0"]);
  heldByA();
  await Promise.all([...a, ...b]);
  assert.deepEqual(order, ["b0", "a0"]);
  assert.equal(limiter.running, 2);
});

Deno.test("a newcomer cannot take a freed slot ahead of a waiting call", async () => {
  const limiter = new ConcurrencyLimiter(1, LONG);
  const held = granted(limiter.tryAcquire("a", 64));
  const waiting = limiter.acquire("b", 64);
  held();
  const late = limiter.tryAcquire("c", 64);
  assert.equal(late.ok, false);
  const first = await waiting;
  assert.ok(first.ok);
  first.release();
  assert.equal(limiter.running, 0);
});

Deno.test("a call that waits past queue_wait_ms is BUSY, with its place and the limits in the reason", async () => {
  const limiter = new ConcurrencyLimiter(1, { max: 8, waitMs: 20 });
  const held = granted(limiter.tryAcquire(null, 0));
  const results = await Promise.all([limiter.acquire(null, 0), limiter.acquire(null, 0)]);
  for (const [index, result] of results.entries()) {
    assert.equal(result.ok, false);
    if (result.ok) continue;
    assert.equal(result.code, "BUSY");
    assert.match(result.reason, /limits\.max_concurrent = 1/);
    assert.match(result.reason, /limits\.queue_wait_ms = 20/);
    // The first times out while second of two; the next is then alone, first of one.
    assert.match(result.reason, index === 0 ? /number 1 of 2 in the queue/ : /number 1 of 1/);
    assert.ok(result.queuedMs >= 0);
  }
  assert.equal(limiter.waiting, 0);
  assert.equal(limiter.running, 1);
  held();
  assert.equal(limiter.running, 0);
});

Deno.test("the queue is bounded: beyond queue_max the caller holding the most places gives up its newest", async () => {
  const limiter = new ConcurrencyLimiter(1, { max: 3, waitMs: 60_000 });
  const held = granted(limiter.tryAcquire("flood", 64));
  const flood = [1, 2, 3].map(() => limiter.acquire("flood", 64));
  // The flood itself cannot add a fourth.
  const fourth = await limiter.acquire("flood", 64);
  assert.equal(fourth.ok, false);
  if (!fourth.ok) {
    assert.equal(fourth.code, "BUSY");
    assert.match(fourth.reason, /The queue is full: 3 call\(s\) wait \(limits\.queue_max = 3\)/);
  }
  // Another caller gets in: the flood's newest place is taken from it.
  const other = limiter.acquire("other", 64);
  const displaced = await flood[2];
  assert.equal(displaced?.ok, false);
  if (displaced !== undefined && !displaced.ok) {
    assert.equal(displaced.code, "BUSY");
    assert.match(displaced.reason, /gave its place to another client's/);
  }
  assert.equal(limiter.waiting, 3);
  held();
  const first = await flood[0];
  assert.ok(first?.ok);
  if (first?.ok) first.release();
  const second = await other;
  assert.ok(second.ok, "the other caller is served before the flood's second call");
  second.release();
  const third = await flood[1];
  assert.ok(third?.ok);
  if (third?.ok) third.release();
  assert.equal(limiter.running, 0);
});

Deno.test("a cancelled waiting call leaves the queue at once and holds no slot", async () => {
  const limiter = new ConcurrencyLimiter(1, LONG);
  const held = granted(limiter.tryAcquire("a", 64));
  const controller = new AbortController();
  const cancelled = limiter.acquire("b", 64, controller.signal);
  const after = limiter.acquire("c", 64);
  assert.equal(limiter.waiting, 2);
  controller.abort();
  const result = await cancelled;
  assert.equal(result.ok, false);
  if (!result.ok) {
    assert.equal(result.code, "CANCELLED");
    assert.match(result.reason, /number 1 of 2 in the queue\); nothing ran/);
  }
  assert.equal(limiter.waiting, 1);
  assert.equal(limiter.running, 1);
  held();
  const next = await after;
  assert.ok(next.ok);
  next.release();
  // No slot leaked: the whole cap is free again.
  assert.equal(limiter.running, 0);
  granted(limiter.tryAcquire("d", 64))();
});

Deno.test("an already-aborted signal is CANCELLED without queueing", async () => {
  const limiter = new ConcurrencyLimiter(1, LONG);
  const held = granted(limiter.tryAcquire(null, 0));
  const result = await limiter.acquire(null, 0, AbortSignal.abort());
  assert.equal(result.ok, false);
  if (!result.ok) assert.equal(result.code, "CANCELLED");
  assert.equal(limiter.waiting, 0);
  held();
});

Deno.test("close() refuses every waiting call and every later one; running slots stay until released", async () => {
  const limiter = new ConcurrencyLimiter(1, LONG);
  const held = granted(limiter.tryAcquire(null, 0));
  const waiting = limiter.acquire(null, 0);
  limiter.close();
  const result = await waiting;
  assert.equal(result.ok, false);
  if (!result.ok) assert.match(result.reason, /The server is stopping/);
  assert.equal(limiter.running, 1);
  held();
  const later = await limiter.acquire(null, 0);
  assert.equal(later.ok, false);
  assert.equal(limiter.running, 0);
});

Deno.test("without a queue (queue_max or queue_wait_ms 0) a call beyond the cap is BUSY at once", async () => {
  for (const queueLimits of [{ max: 0, waitMs: 10_000 }, { max: 64, waitMs: 0 }]) {
    const limiter = new ConcurrencyLimiter(1, queueLimits);
    const held = granted(limiter.tryAcquire(null, 0));
    const result = await limiter.acquire(null, 0);
    assert.equal(result.ok, false);
    if (!result.ok) {
      assert.equal(result.code, "BUSY");
      assert.match(result.reason, /limits\.max_concurrent = 1/);
    }
    assert.equal(limiter.waiting, 0);
    held();
  }
});

Deno.test("ConcurrencyLimiter rejects negative or fractional queue bounds", () => {
  assert.throws(() => new ConcurrencyLimiter(1, { max: -1, waitMs: 0 }), RangeError);
  assert.throws(() => new ConcurrencyLimiter(1, { max: 1, waitMs: 1.5 }), RangeError);
});

Deno.test("every call that waited reports its wait once, whether it got a slot or the wait bound", async () => {
  const waits: number[] = [];
  const limiter = new ConcurrencyLimiter(1, {
    max: 4,
    waitMs: 50,
    onWaited: (ms) => waits.push(ms),
  });
  const held = granted(await limiter.acquire("a", 64));
  assert.deepEqual(waits, [], "a call that took a free slot did not wait");
  const timedOut = await limiter.acquire("b", 64);
  assert.equal(timedOut.ok, false);
  assert.equal(waits.length, 1, "the BUSY after the wait bound is reported");
  const pending = limiter.acquire("c", 64);
  held();
  granted(await pending)();
  assert.equal(waits.length, 2, "the call served from the queue is reported");
  assert.ok(waits.every((ms) => Number.isInteger(ms) && ms >= 0));
});
