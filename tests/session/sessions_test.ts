/**
 * The session rules on a real state directory, with the clock under the
 * test's control: another owner's id is "not found", an idle session
 * expires, the per-caller bound counts live sessions only.
 */
import { deepEqual, equal, ok } from "node:assert/strict";
import { sessionOwner, Sessions } from "../../src/session/mod.ts";

async function withSessions(
  fn: (sessions: Sessions, clock: { now: number }, dir: string) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-sessions-unit-" });
  const clock = { now: 1_000_000 };
  try {
    await fn(
      new Sessions(`${dir}/state`, { idleTtlMs: 60_000, maxPerCaller: 2 }, () => clock.now),
      clock,
      dir,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("another caller's session id is not found, and cannot be moved or ended", async () => {
  await withSessions(async (sessions) => {
    const alice = sessionOwner("alice");
    const bob = sessionOwner("bob");
    const started = await sessions.start(alice);
    ok(started.ok);
    const id = started.session.id;
    equal(await sessions.use(bob, id), null);
    equal(await sessions.setCwd(bob, id, "sub"), false);
    equal(await sessions.end(bob, id), false);
    // Alice's session is untouched by Bob's attempts.
    deepEqual((await sessions.use(alice, id))?.cwd, ".");
    equal(sessionOwner(null), "local");
    equal(await sessions.use(sessionOwner(null), id), null);
  });
});

Deno.test("an idle session expires after the TTL; use restarts the idle clock", async () => {
  await withSessions(async (sessions, clock, dir) => {
    const owner = sessionOwner(null);
    const started = await sessions.start(owner);
    ok(started.ok);
    clock.now += 50_000;
    ok(await sessions.use(owner, started.session.id), "used within the TTL");
    clock.now += 50_000;
    ok(await sessions.use(owner, started.session.id), "the previous use restarted the clock");
    clock.now += 60_001;
    equal(await sessions.use(owner, started.session.id), null);
    // The expired record is gone from disk, not just hidden.
    const left = [...Deno.readDirSync(`${dir}/state/sessions`)].filter((e) => e.name !== ".lock");
    deepEqual(left, []);
  });
});

Deno.test("the per-caller bound counts live sessions of that caller only", async () => {
  await withSessions(async (sessions, clock) => {
    const owner = sessionOwner("a");
    ok((await sessions.start(owner)).ok);
    ok((await sessions.start(owner)).ok);
    equal((await sessions.start(owner)).ok, false);
    ok((await sessions.start(sessionOwner("b"))).ok, "another caller has its own bound");
    clock.now += 60_001;
    ok((await sessions.start(owner)).ok, "expired sessions no longer count");
  });
});

Deno.test("session ids are random and unique", async () => {
  await withSessions(async (sessions) => {
    const ids = new Set<string>();
    for (let i = 0; i < 2; i++) {
      const started = await sessions.start(sessionOwner(`c${i}`));
      ok(started.ok);
      ids.add(started.session.id);
    }
    equal(ids.size, 2);
  });
});
