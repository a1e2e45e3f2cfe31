import assert from "node:assert/strict";
import { ConcurrencyLimiter } from "../../src/concurrency/mod.ts";

Deno.test("ConcurrencyLimiter refuses beyond the global cap and frees on release", () => {
  const limiter = new ConcurrencyLimiter(2);
  const a = limiter.tryAcquire(null, 0);
  const b = limiter.tryAcquire(null, 0);
  assert.ok(a.ok && b.ok);
  const c = limiter.tryAcquire(null, 0);
  assert.equal(c.ok, false);
  if (!c.ok) assert.match(c.reason, /max_concurrent = 2/);
  if (a.ok) a.release();
  assert.equal(limiter.tryAcquire(null, 0).ok, true);
});

Deno.test("ConcurrencyLimiter enforces a per-client cap without touching other clients", () => {
  const limiter = new ConcurrencyLimiter(10);
  assert.ok(limiter.tryAcquire("a", 1).ok);
  const again = limiter.tryAcquire("a", 1);
  assert.equal(again.ok, false);
  if (!again.ok) assert.match(again.reason, /max_concurrent_per_client = 1/);
  assert.ok(limiter.tryAcquire("b", 1).ok);
});

Deno.test("ConcurrencyLimiter release is idempotent", () => {
  const limiter = new ConcurrencyLimiter(1);
  const a = limiter.tryAcquire("k", 1);
  assert.ok(a.ok);
  if (a.ok) {
    a.release();
    a.release();
  }
  assert.equal(limiter.running, 0);
  assert.ok(limiter.tryAcquire("k", 1).ok);
  assert.equal(limiter.tryAcquire("k", 1).ok, false);
});

Deno.test("ConcurrencyLimiter rejects a non-positive cap", () => {
  assert.throws(() => new ConcurrencyLimiter(0), RangeError);
});
