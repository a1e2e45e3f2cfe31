/**
 * `SandboxAhead`'s choice, against a serving helper that only records what
 * it is asked: which sandbox a call gets, when the next one is made, and
 * that one not fit for the call is stopped and let go, never handed out.
 */
import assert from "node:assert/strict";
import type { CallLaunch } from "../../src/exec/mod.ts";
import { SandboxAhead } from "../../src/exec/sandbox_ahead.ts";
import type { CallSinks, ServedCall, ServingHelper } from "../../src/exec/serving_helper.ts";

interface FakeCall extends ServedCall {
  readonly id: number;
  readonly sinks: CallSinks;
  readonly asked: string[];
  end(): void;
}

/** A helper whose calls end only when told, and remember what was asked of them. */
function fakeHelper() {
  const started: FakeCall[] = [];
  const helper = {
    start(_cwd: string, _env: unknown, _args: readonly string[], _stdin: string, sinks: CallSinks) {
      let end!: (status: Deno.CommandStatus) => void;
      const status = new Promise<Deno.CommandStatus>((resolve) => end = resolve);
      const asked: string[] = [];
      const call: FakeCall = {
        id: started.length + 1,
        sinks,
        asked,
        status,
        drained: Promise.resolve(),
        helperLost: false,
        write: () => asked.push("write"),
        closeInput: () => asked.push("closeInput"),
        kill: (signal) => asked.push(`kill ${signal}`),
        startBackstop: () => asked.push("backstop"),
        drop: () => asked.push("drop"),
        end: () => end({ success: true, code: 0, signal: null }),
      };
      started.push(call);
      return call;
    },
  } as unknown as ServingHelper;
  return { helper, started };
}

const launch = (argv: string[]): CallLaunch => ({ argv, cwd: "/", env: {}, sandbox: null });
const A = launch(["/helper", "--pidns=root", "a"]);
const B = launch(["/helper", "--pidns=root", "b"]);
const NO_SINKS: CallSinks = { output() {} };
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("SandboxAhead: the first call starts its own; the next one is made only once that call has ended", async () => {
  const { helper, started } = fakeHelper();
  const ahead = new SandboxAhead(helper, () => "jail-1");
  const first = ahead.take(A, NO_SINKS) as FakeCall;
  assert.equal(started.length, 1);
  await settle();
  assert.equal(started.length, 1, "nothing is made beside a running call");
  first.end();
  await settle();
  assert.equal(started.length, 2, "made once the call's tree is gone");
  const second = ahead.take(A, NO_SINKS) as FakeCall;
  assert.equal(second.id, 2, "the call gets the one made ahead");
  assert.deepEqual(second.asked, []);
});

Deno.test("SandboxAhead: output a waiting sandbox printed reaches the call that takes it", async () => {
  const { helper, started } = fakeHelper();
  const ahead = new SandboxAhead(helper, () => "jail-1");
  (ahead.take(A, NO_SINKS) as FakeCall).end();
  await settle();
  started[1]!.sinks.output("stderr", new TextEncoder().encode("early"));
  const seen: string[] = [];
  ahead.take(A, {
    output: (stream, bytes) => seen.push(`${stream}:${new TextDecoder().decode(bytes)}`),
  });
  started[1]!.sinks.output("stdout", new TextEncoder().encode("late"));
  assert.deepEqual(seen, ["stderr:early", "stdout:late"]);
});

for (
  const [what, change] of [
    ["made for another argv", { launch: B, jail: "jail-1", ended: false }],
    ["made before the jail folder was replaced", { launch: A, jail: "jail-2", ended: false }],
    ["whose jail folder cannot be read now", { launch: A, jail: null, ended: false }],
    ["that ended while waiting", { launch: A, jail: "jail-1", ended: true }],
  ] as const
) {
  Deno.test(`SandboxAhead: a sandbox ${what} is let go, and the call starts its own`, async () => {
    const { helper, started } = fakeHelper();
    let jail: string | null = "jail-1";
    const ahead = new SandboxAhead(helper, () => jail);
    (ahead.take(A, NO_SINKS) as FakeCall).end();
    await settle();
    const waiting = started[1]!;
    if (change.ended) {
      waiting.end();
      await settle();
    }
    jail = change.jail;
    const taken = ahead.take(change.launch, NO_SINKS) as FakeCall;
    assert.notEqual(taken.id, waiting.id);
    assert.equal(taken.id, 3);
    // One still waiting is stopped; every one is let go (stdin closed, output dropped).
    assert.deepEqual(
      waiting.asked,
      change.ended ? ["closeInput", "drop"] : ["kill SIGKILL", "closeInput", "drop"],
    );
  });
}

Deno.test("SandboxAhead: with calls in flight, at most one sandbox waits", async () => {
  const { helper, started } = fakeHelper();
  const ahead = new SandboxAhead(helper, () => "jail-1");
  const calls = [ahead.take(A, NO_SINKS), ahead.take(A, NO_SINKS), ahead.take(A, NO_SINKS)];
  for (const call of calls) (call as FakeCall).end();
  await settle();
  assert.equal(started.length, 4, "three calls, and one made ahead");
});
