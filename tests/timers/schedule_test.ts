/**
 * The one scheduler every timer of the server runs on: order, cancellation,
 * repetition, a throwing callback, and what keeps a process alive (in child
 * processes, where a process's exit can be watched). Times are short and
 * asserted as order or as "not yet", never as a duration.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { after, every, pendingTimers, sleep } from "../../src/timers/mod.ts";
import { wakeTime } from "../../src/timers/schedule.ts";

const MODULE = fileURLToPath(new URL("../../src/timers/mod.ts", import.meta.url));
const SCHEDULE = fileURLToPath(new URL("../../src/timers/schedule.ts", import.meta.url));

Deno.test("timers run in deadline order, and timers due together in the order they were set", async () => {
  const order: string[] = [];
  after(30, () => order.push("30"));
  after(10, () => order.push("10a"));
  after(10, () => order.push("10b"));
  after(0, () => order.push("0"));
  await sleep(60);
  assert.deepEqual(order, ["0", "10a", "10b", "30"]);
  assert.equal(pendingTimers(), 0);
});

Deno.test("a cancelled timer never runs, also when an earlier callback of the same turn cancels it", async () => {
  const ran: string[] = [];
  const cancelled = after(5, () => ran.push("cancelled"));
  cancelled.cancel();
  let second: { cancel(): void } | null = null;
  after(10, () => {
    ran.push("first");
    second?.cancel();
  });
  second = after(10, () => ran.push("second"));
  await sleep(40);
  assert.deepEqual(ran, ["first"]);
  cancelled.cancel();
  assert.equal(pendingTimers(), 0);
});

Deno.test("a repeating timer runs until cancelled, also from its own callback", async () => {
  let count = 0;
  const ticker = every(2, () => {
    count++;
    if (count === 3) ticker.cancel();
  });
  await sleep(60);
  assert.equal(count, 3);
  assert.equal(pendingTimers(), 0);
});

Deno.test("a timer set by a callback waits for a later turn, even at zero delay", async () => {
  const order: string[] = [];
  after(1, () => {
    order.push("outer");
    after(0, () => order.push("inner"));
  });
  after(1, () => order.push("sibling"));
  await sleep(30);
  assert.deepEqual(order, ["outer", "sibling", "inner"]);
});

Deno.test("a throwing callback is reported as uncaught and the other callbacks still run", async () => {
  const seen: unknown[] = [];
  const onError = (event: ErrorEvent) => {
    seen.push(event.error);
    event.preventDefault();
  };
  globalThis.addEventListener("error", onError);
  try {
    const ran: string[] = [];
    after(1, () => {
      throw new Error("boom");
    });
    after(1, () => ran.push("next"));
    await sleep(30);
    assert.deepEqual(ran, ["next"]);
    assert.equal(seen.length, 1);
    assert.equal((seen[0] as Error).message, "boom");
  } finally {
    globalThis.removeEventListener("error", onError);
  }
});

Deno.test("a chain of zero-delay waits lets other timers and I/O have their turn", async () => {
  // What nextTask() promises the redaction of a large output: the chain
  // yields to the event loop at each step.
  let timerDuring = false;
  let readDuring = false;
  let chaining = true;
  after(5, () => timerDuring = chaining);
  const read = Deno.readTextFile(MODULE).then(() => readDuring = chaining);
  for (let step = 0; step < 50; step++) await sleep(0);
  chaining = false;
  await read;
  assert.ok(timerDuring, "the 5 ms timer ran while the chain went on");
  assert.ok(readDuring, "the file read finished while the chain went on");
});

Deno.test("delays that are negative, not a number or beyond a runtime timer's longest wait are taken as setTimeout takes them", async () => {
  const ran: string[] = [];
  after(-5, () => ran.push("negative"));
  after(Number.NaN, () => ran.push("nan"));
  const far = after(2 ** 33, () => ran.push("far"));
  await sleep(20);
  assert.deepEqual(ran, ["negative", "nan"]);
  assert.equal(pendingTimers(), 1);
  far.cancel();
  assert.equal(pendingTimers(), 0);
});

Deno.test("a wake is never early, at most 1/64 of the wait and 32 ms late, and shared by nearby deadlines", () => {
  const now = 1_000_000.25;
  // Short waits end at the deadline itself.
  for (const wait of [0, 0.5, 20, 127.9]) assert.equal(wakeTime(now + wait, now), now + wait);
  for (const wait of [128, 500, 3_000, 30_000, 86_400_000]) {
    for (const shift of [0, 0.3, 7, 13.7]) {
      const deadline = now + wait + shift;
      const at = wakeTime(deadline, now);
      assert.ok(at >= deadline, `a ${wait} ms wait woke early`);
      assert.ok(
        at - deadline <= Math.min(32, wait / 64),
        `a ${wait} ms wait woke ${at - deadline} ms late`,
      );
    }
  }
  // Calls 7 ms apart (back to back): their 3 s guards mostly share a wake.
  const wakes = new Set<number>();
  for (let call = 0; call < 100; call++) {
    const start = now + call * 7;
    wakes.add(wakeTime(start + 3_000, start));
  }
  assert.ok(wakes.size <= 25, `${wakes.size} wakes for 100 guards`);
});

/** Runs `body` in a child Deno with the timers module as `t`; returns its stdout and how long it lived. */
async function child(
  body: string,
  v8Flags = "",
  readable = MODULE,
): Promise<{ stdout: string; ms: number }> {
  const script = `import * as t from ${JSON.stringify(MODULE)};\n${body}\n`;
  const started = performance.now();
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--no-config",
      `--allow-read=${readable}`,
      ...(v8Flags === "" ? [] : [`--v8-flags=${v8Flags}`]),
      "-",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    // A timer that wrongly holds the process fails the test instead of hanging it.
    signal: AbortSignal.timeout(20_000),
  }).spawn();
  const writer = output.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  const done = await output.output();
  const ms = performance.now() - started;
  const stderr = new TextDecoder().decode(done.stderr);
  assert.ok(done.success, stderr);
  return { stdout: new TextDecoder().decode(done.stdout), ms };
}

Deno.test("a pending timer keeps the process alive until it runs, as setTimeout does", async () => {
  const { stdout } = await child(`t.after(300, () => console.log("ran"));`);
  assert.equal(stdout, "ran\n");
});

Deno.test("a timer with keepAlive false neither holds the process nor is lost while something else holds it", async () => {
  const alone = await child(`t.every(200, () => console.log("tick"), { keepAlive: false });`);
  assert.equal(alone.stdout, "", "the process ended without waiting for the timer");
  const held = await child(`
    t.after(100, () => console.log("unheld ran"), { keepAlive: false });
    t.after(400, () => console.log("holder ran"));
  `);
  assert.equal(held.stdout, "unheld ran\nholder ran\n");
});

Deno.test("cancelling the last timer that holds the process lets it end before that timer's deadline", async () => {
  // A process held by a 20 s timer ends at once when it is cancelled, and
  // while a 10 s unheld timer is still pending.
  const { stdout, ms } = await child(`
    t.after(10_000, () => console.log("unheld ran"), { keepAlive: false });
    const held = t.after(20_000, () => console.log("held ran"));
    t.after(50, () => { held.cancel(); console.log("cancelled"); });
  `);
  assert.equal(stdout, "cancelled\n");
  assert.ok(ms < 9_000, `the process lived ${ms} ms`);
});

Deno.test("a hold that runs out is renewed, whether it ran out while holding or while idle", async () => {
  // The hold lasts 24.8 days in a server; 30 ms here.
  const { stdout } = await child(
    `
    const { Scheduler } = await import(${JSON.stringify(SCHEDULE)});
    const s = new Scheduler(30);
    s.schedule(200, () => console.log("held across two holds"), null, true);
    await new Promise((resolve) => s.schedule(260, resolve, null, true));
    // Idle now: this hold runs out with nothing held.
    await new Promise((resolve) => AbortSignal.timeout(60).addEventListener("abort", resolve));
    s.schedule(150, () => console.log("held after an idle run-out"), null, true);
  `,
    "",
    SCHEDULE,
  );
  assert.equal(stdout, "held across two holds\nheld after an idle run-out\n");
});

Deno.test("cancelled timers leave no runtime timer behind: 20,000 cancelled 60 s timeouts keep the heap small", async () => {
  // One runtime timer per timer, left to run out (as an abandoned
  // AbortSignal.timeout is: 640 bytes each, measured), would keep about 25 MB
  // alive for a minute.
  const { stdout } = await child(
    `
    const gc = globalThis.gc;
    gc(); gc();
    const before = Deno.memoryUsage().heapUsed;
    for (let i = 0; i < 20_000; i++) {
      const timeout = t.after(60_000, () => {});
      // Each a new earliest deadline first, as when calls overlap a shorter timer.
      const short = t.after(1, () => {});
      timeout.cancel();
      short.cancel();
      await Promise.resolve();
    }
    gc(); gc();
    console.log(Deno.memoryUsage().heapUsed - before);
  `,
    "--expose-gc",
  );
  const grown = Number(stdout.trim());
  assert.ok(Number.isFinite(grown), stdout);
  assert.ok(grown < 3 * 1024 * 1024, `the heap grew by ${grown} bytes`);
});
