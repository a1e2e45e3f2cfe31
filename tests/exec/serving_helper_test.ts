/**
 * The serving helper (`htmcp-spawn --serve`): its frames, that a call runs
 * nothing until its whole request and its go came, that calls in flight
 * are kept apart, that every call of an executor is a fork of one helper,
 * and that neither the helper nor any call outlives the server.
 */
import assert from "node:assert/strict";
import type { SandboxMode } from "../../src/config/types.ts";
import { DEFAULT_LAUNCHER_TOOLS, type ExecOutcome } from "../../src/exec/mod.ts";
import {
  commandStatus,
  encodeFrame,
  encodeHelperRequest,
  FRAME_HEAD_BYTES,
  FrameParser,
  MAX_REQUEST_BYTES,
} from "../../src/exec/serving_helper.ts";
import { planLaunch } from "../../scripts/launch.ts";
import { exists } from "../_helpers/exists.ts";
import { assertSandboxMode, prepareJail } from "../_helpers/jail.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { REPO, serverEnv } from "../_helpers/stdio_harness.ts";
import { endServingHelper, isServingHelper, NO_REDACTION, setup } from "./_fixtures.ts";
import { waitUntil } from "../_helpers/wait_until.ts";

const HELPER = DEFAULT_LAUNCHER_TOOLS.spawn;
const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const [R, I, E, K] = ["R", "I", "E", "K"].map((kind) => kind.charCodeAt(0)) as [
  number,
  number,
  number,
  number,
];

/** The live children of `pid` (our own process or one we started) with their argv. */
async function childrenOf(pid: number): Promise<{ pid: number; argv: string[] }[]> {
  // Through sh: the suite's narrow permissions do not let Deno read /proc.
  const script = 'for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do ' +
    'printf "%s\\t" "$c"; tr "\\0" "\\t" < /proc/"$c"/cmdline 2>/dev/null; echo; done';
  const out = await new Deno.Command("sh", { args: ["-c", script, "sh", String(pid)] }).output();
  return decode(out.stdout).split("\n").filter(Boolean).map((line) => {
    const [child, ...argv] = line.split("\t").filter((word) => word !== "");
    return { pid: Number(child), argv };
  });
}

/** The pids of `pid`'s children that are serving helpers. */
async function servingHelpersOf(pid: number): Promise<number[]> {
  return (await childrenOf(pid))
    .filter(({ argv }) => argv.length === 2 && argv[0] === HELPER && argv[1] === "--serve")
    .map((child) => child.pid);
}

interface CallSeen {
  stdout: string;
  stderr: string;
  closed: string[];
  status: number | null;
}

/**
 * A serving helper we drive with raw frames, and what it said of each call.
 * `ignoring`: signals its parent ignores (started through `sh`'s `trap ""`),
 * which it inherits as a server started under `nohup` would.
 */
function rawHelper(ignoring: readonly string[] = []) {
  const [program, args] = ignoring.length === 0
    ? [HELPER, ["--serve"]]
    : ["/bin/sh", ["-c", `trap "" ${ignoring.join(" ")}; exec "$0" --serve`, HELPER]];
  const child = new Deno.Command(program, {
    args,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const calls = new Map<number, CallSeen>();
  const seen = (id: number) => {
    let call = calls.get(id);
    if (call === undefined) {
      calls.set(id, call = { stdout: "", stderr: "", closed: [], status: null });
    }
    return call;
  };
  const parser = new FrameParser({
    output(id, stream, bytes) {
      seen(id)[stream] += decode(bytes);
    },
    frame(kind, id, payload) {
      if (kind === "C".charCodeAt(0)) seen(id).closed.push(decode(payload));
      if (kind === "X".charCodeAt(0)) seen(id).status = Number(decode(payload));
    },
  });
  const reading = (async () => {
    for await (const chunk of child.stdout) parser.push(chunk);
  })();
  let closing: Promise<{ code: number; stderr: string }> | null = null;
  return {
    calls,
    send: (bytes: Uint8Array) => writer.write(bytes),
    /** Waits until call `id` has ended and both its streams closed. */
    async ended(id: number): Promise<CallSeen> {
      const done = () => {
        const call = calls.get(id);
        return call !== undefined && call.status !== null && call.closed.length === 2;
      };
      await waitUntil(done, `call ${id}'s end`, 10_000);
      return calls.get(id)!;
    },
    /** Closes its stdin and waits for it to exit (once); its status and stderr. */
    close() {
      closing ??= (async () => {
        await writer.close().catch(() => {});
        const [status, stderr] = await Promise.all([
          child.status,
          new Response(child.stderr).text(),
          reading,
        ]);
        return { code: status.code, stderr };
      })();
      return closing;
    },
  };
}

type RawHelper = ReturnType<typeof rawHelper>;

/** Runs `body` with a raw serving helper and a temp folder; both are gone after. */
async function withRawHelper(
  body: (helper: RawHelper, dir: string) => Promise<void>,
  ignoring: readonly string[] = [],
) {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-serve-" }));
  const helper = rawHelper(ignoring);
  try {
    await body(helper, dir);
  } finally {
    await helper.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** An R frame: one command in `cwd`, the helper's options before `--`. */
function start(id: number, cwd: string, options: string[], argv: string[], stdin = "p") {
  const request = encodeHelperRequest(cwd, { PATH: "/usr/bin:/bin" }, [...options, "--", ...argv]);
  assert.ok(request !== null);
  return encodeFrame(R, id, new Uint8Array([...encode(stdin), ...request]));
}

// The suite has no sys permission for Deno.uid(): ask id(1).
const UID = decode((await new Deno.Command("id", { args: ["-u"] }).output()).stdout).trim();
const PIDNS = UID === "0" ? "--pidns=root" : "--pidns=user";

Deno.test("encodeHelperRequest() writes the cwd, the env count, the entries and the arguments, each NUL-terminated", () => {
  const bytes = encodeHelperRequest("/srv/jail", { A: "1", PATH: "/usr/bin" }, [
    "--go",
    "--",
    "/bin/true",
  ]);
  assert.ok(bytes !== null);
  assert.equal(
    decode(bytes),
    "/srv/jail\x002\x00A=1\x00PATH=/usr/bin\x00--go\x00--\x00/bin/true\x00",
  );
});

Deno.test("encodeHelperRequest() refuses a NUL anywhere and a request over the helper's limit", () => {
  assert.equal(encodeHelperRequest("/j", {}, ["a\0b"]), null);
  assert.equal(encodeHelperRequest("/j", { K: "v\0w" }, []), null);
  assert.equal(encodeHelperRequest("/j\0", {}, []), null);
  assert.equal(encodeHelperRequest("/j", {}, ["x".repeat(MAX_REQUEST_BYTES)]), null);
  assert.ok(encodeHelperRequest("/j", {}, ["x".repeat(MAX_REQUEST_BYTES - 16)]) !== null);
});

Deno.test("FrameParser passes output on piece by piece and other frames whole, however the stream is cut", () => {
  const stream = new Uint8Array([
    ...encodeFrame("O".charCodeAt(0), 7, encode("hello ")),
    ...encodeFrame("e".charCodeAt(0), 9, encode("warn")),
    ...encodeFrame("O".charCodeAt(0), 7, encode("world")),
    ...encodeFrame("C".charCodeAt(0), 7, encode("1")),
    ...encodeFrame("X".charCodeAt(0), 7, encode("256")),
  ]);
  for (const cut of [1, 2, 5, 17, 18, 23, stream.byteLength]) {
    const output: Record<string, string> = {};
    const frames: string[] = [];
    const parser = new FrameParser({
      output(id, which, bytes) {
        output[`${id}:${which}`] = (output[`${id}:${which}`] ?? "") + decode(bytes);
      },
      frame(kind, id, payload) {
        frames.push(`${String.fromCharCode(kind)}${id}=${decode(payload)}`);
      },
    });
    for (let at = 0; at < stream.byteLength; at += cut) parser.push(stream.subarray(at, at + cut));
    assert.deepEqual(output, { "7:stdout": "hello world", "9:stderr": "warn" }, `cut ${cut}`);
    assert.deepEqual(frames, ["C7=1", "X7=256"], `cut ${cut}`);
  }
});

Deno.test("FrameParser refuses a malformed head and an oversized control frame", () => {
  const parser = () => new FrameParser({ output() {}, frame() {} });
  assert.throws(() => parser().push(encode("Ozzzzzzzz00000001x")), SyntaxError);
  const big = encodeFrame("X".charCodeAt(0), 1, new Uint8Array(65));
  assert.throws(() => parser().push(big), SyntaxError);
  assert.equal(FRAME_HEAD_BYTES, 17);
});

Deno.test("commandStatus() reads a wait status as Deno reports a child's end", () => {
  assert.deepEqual(commandStatus(0), { success: true, code: 0, signal: null });
  assert.deepEqual(commandStatus(125 << 8), { success: false, code: 125, signal: null });
  assert.deepEqual(commandStatus(9), { success: false, code: 137, signal: "SIGKILL" });
  assert.deepEqual(commandStatus(15), { success: false, code: 143, signal: "SIGTERM" });
});

Deno.test("a served call without its go byte runs nothing (the canary is never created); with it, it runs", async () => {
  await withRawHelper(async (helper, dir) => {
    const touch = ["/usr/bin/touch", `${dir}/canary`];
    await helper.send(start(1, dir, [PIDNS, "--go"], touch));
    await helper.send(encodeFrame(E, 1, new Uint8Array()));
    const refused = await helper.ended(1);
    assert.equal(commandStatus(refused.status!).code, 125);
    assert.equal(refused.stdout + refused.stderr, "", "ended having said nothing");
    assert.equal(await exists(`${dir}/canary`), false);

    // The same call with its go runs: the assertion above can fail.
    await helper.send(start(2, dir, [PIDNS, "--go"], touch));
    await helper.send(encodeFrame(I, 2, encode("g")));
    await helper.send(encodeFrame(E, 2, new Uint8Array()));
    assert.equal(commandStatus((await helper.ended(2)).status!).code, 0);
    assert.equal(await exists(`${dir}/canary`), true);
  });
});

/** The blocked and ignored signal masks in `/proc/PID/status`, as printed there. */
function signalMasks(status: string): { blocked: string; ignored: string } {
  const mask = (name: string) => new RegExp(`^${name}:\\s*([0-9a-f]+)$`, "m").exec(status)?.[1];
  return { blocked: mask("SigBlk") ?? "missing", ignored: mask("SigIgn") ?? "missing" };
}

const NO_SIGNAL = "0000000000000000";

Deno.test("a served command starts with no blocked and no ignored signal, even under a helper that inherited ignored ones", async () => {
  const ignoring = ["HUP", "INT", "QUIT", "USR2", "PIPE", "TERM"];
  await withRawHelper(async (helper, dir) => {
    await helper.send(start(1, dir, [PIDNS], ["/usr/bin/cat", "/proc/self/status"], "n"));
    const call = await helper.ended(1);
    assert.equal(commandStatus(call.status!).code, 0, call.stderr);
    assert.deepEqual(signalMasks(call.stdout), { blocked: NO_SIGNAL, ignored: NO_SIGNAL });
  }, ignoring);
  // The setup can fail: a process started the same way without the helper keeps them ignored.
  const plain = await new Deno.Command("/bin/sh", {
    args: ["-c", `trap "" ${ignoring.join(" ")}; exec /usr/bin/cat /proc/self/status`],
  }).output();
  assert.notEqual(signalMasks(decode(plain.stdout)).ignored, NO_SIGNAL);
});

Deno.test("--backstop-at-go: a call's backstop starts at its B frame, and not before", async () => {
  await withRawHelper(async (helper) => {
    const sleeper = (id: number) =>
      start(id, "/", [PIDNS, "--backstop-at-go"], ["/bin/sleep", "30"], "n");
    await helper.send(sleeper(1));
    await helper.send(sleeper(2));
    // 300 ms without a go: neither backstop has started.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(helper.calls.get(1)?.status ?? null, null);
    await helper.send(encodeFrame("B".charCodeAt(0), 1, encode("100")));
    // Killed by its backstop: the outer's 137, as a wait status.
    assert.equal((await helper.ended(1)).status, 137 << 8);
    assert.equal(helper.calls.get(2)?.status ?? null, null);
    // Only a number of milliseconds starts one: anything else is ignored.
    await helper.send(encodeFrame("B".charCodeAt(0), 2, encode("-5")));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(helper.calls.get(2)?.status ?? null, null);
  });
});

Deno.test("calls in flight in one serving helper keep their own cwd, input, output and status", async () => {
  await withRawHelper(async (helper, dir) => {
    await Deno.mkdir(`${dir}/b`);
    const dirs = [dir, `${dir}/b`];
    const script = 'read line; pwd; echo "in=$line"; echo "err=$line" >&2; exit $1';
    // Both started before either gets its input: two forks live at once.
    await helper.send(start(11, dirs[0]!, [PIDNS], ["/bin/sh", "-c", script, "sh", "3"]));
    await helper.send(start(12, dirs[1]!, [PIDNS], ["/bin/sh", "-c", script, "sh", "4"]));
    await helper.send(encodeFrame(I, 12, encode("second\n")));
    await helper.send(encodeFrame(I, 11, encode("first\n")));
    await helper.send(encodeFrame(E, 11, new Uint8Array()));
    await helper.send(encodeFrame(E, 12, new Uint8Array()));
    const [a, b] = [await helper.ended(11), await helper.ended(12)];
    assert.equal(a.stdout, `${dirs[0]}\nin=first\n`);
    assert.equal(a.stderr, "err=first\n");
    assert.equal(commandStatus(a.status!).code, 3);
    assert.equal(b.stdout, `${dirs[1]}\nin=second\n`);
    assert.equal(b.stderr, "err=second\n");
    assert.equal(commandStatus(b.status!).code, 4);
  });
});

Deno.test("a served call sees only its own three descriptors, not the helper's or another call's pipes", async () => {
  await withRawHelper(async (helper, dir) => {
    await helper.send(start(21, dir, [PIDNS], ["/bin/sleep", "5"]));
    await helper.send(start(22, dir, [PIDNS], ["/bin/ls", "/proc/self/fd"], "n"));
    const listed = await helper.ended(22);
    // ls's own directory handle is the fourth entry.
    assert.deepEqual(listed.stdout.trim().split("\n").map(Number).sort(), [0, 1, 2, 3]);
    await helper.send(encodeFrame(K, 21, encode("14")));
    assert.equal(commandStatus((await helper.ended(21)).status!).code, 137);
  });
});

Deno.test("the serving helper forwards only the kill signals: a stop request is ignored", async () => {
  await withRawHelper(async (helper, dir) => {
    await helper.send(start(31, dir, [PIDNS], ["/bin/sh", "-c", "read x; echo done"]));
    await helper.send(encodeFrame(K, 31, encode("19"))); // SIGSTOP
    await helper.send(encodeFrame(I, 31, encode("\n")));
    await helper.send(encodeFrame(E, 31, new Uint8Array()));
    const call = await helper.ended(31);
    assert.equal(call.stdout, "done\n");
    assert.equal(commandStatus(call.status!).code, 0);
  });
});

Deno.test("end of file on its stdin stops every call still running, and the helper exits once their trees are gone", async () => {
  await withRawHelper(async (helper, dir) => {
    // The command outlives a kill of its parent only if the namespace does not take it.
    const script = `(sleep 1; touch ${dir}/canary) & echo started; wait`;
    await helper.send(start(41, dir, [PIDNS], ["/bin/sh", "-c", script], "n"));
    await waitUntil(
      () => (helper.calls.get(41)?.stdout ?? "").includes("started"),
      "the call's start",
    );
    const { code } = await helper.close();
    assert.equal(code, 0);
    assert.equal(commandStatus(helper.calls.get(41)!.status!).code, 137);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(await exists(`${dir}/canary`), false, "a process of the call outlived the helper");
  });
});

Deno.test("a malformed frame ends the serving helper with 125 and a line naming it, having run nothing", async () => {
  await withRawHelper(async (helper, dir) => {
    // A whole, valid call behind the malformed frame, in the same write: the
    // helper must stop at the malformed one, never reaching the call.
    const touch = start(51, dir, [PIDNS], ["/usr/bin/touch", `${dir}/canary`], "n");
    await helper.send(new Uint8Array([...encode("Rzzzzzzzz00000000"), ...touch]));
    const { code, stderr } = await helper.close();
    assert.equal(code, 125);
    assert.match(stderr, /^htmcp-spawn: serve: malformed frame/);
    assert.equal(helper.calls.size, 0);
    assert.equal(await exists(`${dir}/canary`), false);
  });
});

Deno.test("a served call with a bad option or request fails alone with 125 and a line naming it, nothing run; the helper serves on", async () => {
  await withRawHelper(async (helper, dir) => {
    // The helper parses each request itself now (it creates the call's
    // namespace): a bad one must fail that call, not end the helper.
    const touch = ["/usr/bin/touch", `${dir}/canary`];
    await helper.send(start(61, dir, [PIDNS, "--no-such-option"], touch, "n"));
    const badOption = await helper.ended(61);
    assert.equal(commandStatus(badOption.status!).code, 125);
    assert.equal(badOption.stderr, "htmcp-spawn: --no-such-option: Invalid argument\n");
    const badCount = encode("n/\0not-a-count\0--\0/usr/bin/true\0");
    await helper.send(encodeFrame(R, 62, badCount));
    const badRequest = await helper.ended(62);
    assert.equal(commandStatus(badRequest.status!).code, 125);
    assert.equal(badRequest.stderr, "htmcp-spawn: request environment count: Invalid argument\n");
    assert.equal(await exists(`${dir}/canary`), false);

    // The same helper runs the next call: the canary can be made.
    await helper.send(start(63, dir, [PIDNS], touch, "n"));
    assert.equal(commandStatus((await helper.ended(63)).status!).code, 0);
    assert.equal(await exists(`${dir}/canary`), true);
  });
});

Deno.test("a call's backstop kills its tree while the server reads none of the helper's output", async () => {
  // Our own helper, whose stdout this test leaves unread: a server whose
  // event loop is stuck. The helper's writes then block, and the backstop
  // (the limit of last resort for exactly such a server) must still fire.
  const child = new Deno.Command(HELPER, {
    args: ["--serve"],
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  try {
    await writer.write(start(71, "/", [PIDNS, "--backstop-ms=400"], ["/usr/bin/yes"], "n"));
    let flooding: { pid: number; argv: string[] }[] = [];
    await waitUntil(async () => {
      flooding = (await descendantsOf(child.pid)).filter(({ argv }) => argv[0] === "/usr/bin/yes");
      return flooding.length === 1;
    }, "the call's command");
    // Long past the backstop: the command is gone although nothing was read.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(await stillRuns(flooding[0]!.pid, flooding[0]!.argv), false);

    // Read now: the call ends as killed, its status the outer's 137.
    let status: number | null = null;
    const parser = new FrameParser({
      output() {},
      frame(kind, id, payload) {
        if (kind === "X".charCodeAt(0) && id === 71) status = Number(decode(payload));
      },
    });
    const reader = child.stdout.getReader();
    await waitUntil(
      async () => {
        const { value, done } = await reader.read();
        if (value !== undefined) parser.push(value);
        return done || status !== null;
      },
      "the call's end",
      10_000,
    );
    assert.equal(status, 137 << 8);
    reader.releaseLock();
  } finally {
    await writer.close().catch(() => {});
    await child.stdout.cancel().catch(() => {});
    await child.status;
  }
});

for (const mode of ["none", "bwrap"] as const satisfies readonly SandboxMode[]) {
  Deno.test(`${mode}: every call of an executor is a fork of one serving helper, which shutdown lets go`, async () => {
    const s = await setup({ mode });
    let helper: number | null = null;
    try {
      await Deno.mkdir(`${s.jail}/sub`);
      // The startup probe ran through it: it is there before any call.
      const probed = s.executor.helperPid();
      assert.ok(probed !== null && await isServingHelper(probed), "the probe's helper stays");
      const first = await s.executor.run({
        callId: crypto.randomUUID(),
        command: s.policy.allowlist.get("true")!,
        args: [],
        cwd: s.jail,
        redactor: NO_REDACTION,
        go: Promise.resolve(true),
      });
      assert.equal(first.code, "OK", first.reason);
      helper = s.executor.helperPid();
      assert.equal(helper, probed, "the first call is a fork of the probe's helper");

      const second = await s.executor.run({
        callId: crypto.randomUUID(),
        command: s.policy.allowlist.get("sh")!,
        args: ["-c", 'pwd; printf "%s|" "$0" "$1"; echo; env | sort', "a b", "$HOME;x"],
        cwd: `${s.jail}/sub`,
        redactor: NO_REDACTION,
        go: Promise.resolve(true),
      });
      assert.equal(second.code, "OK", second.reason);
      const [pwd, args, ...env] = second.stdout.trim().split("\n");
      assert.equal(pwd, `${s.jail}/sub`);
      assert.equal(args, "a b|$HOME;x|", "argv verbatim");
      const names = env.map((line) => line.split("=")[0]).filter((name) => name !== "PWD");
      const expected = Object.keys(s.policy.childEnv).filter((name) => name !== "PWD");
      // sh adds its own SHLVL and _ ; everything else is the policy's, nothing of ours.
      assert.deepEqual(names.filter((n) => n !== "SHLVL" && n !== "_").sort(), expected.sort());
      assert.equal(s.executor.helperPid(), helper, "the same helper served both");
      assert.ok(await isServingHelper(helper));
    } finally {
      await s.close();
    }
    assert.equal(s.executor.helperPid(), null);
    assert.equal(await isServingHelper(helper!), false, "shutdown lets the helper go");
  });
}

for (const mode of ["none", "bwrap"] as const satisfies readonly SandboxMode[]) {
  Deno.test(`${mode}: eight calls in flight with large outputs on both streams each get exactly their own bytes`, async () => {
    const s = await setup({ mode, limits: { maxOutputBytes: 1_000_000 } });
    try {
      // Each call floods both streams with its own letter at once, so the
      // helper's frames of every call interleave on its one stdout.
      const letters = ["A", "B", "C", "D", "E", "F", "G", "H"];
      const script = 'yes "$1" | head -c 300000 & yes "$1$1" | head -c 200000 >&2; wait';
      const outcomes = await Promise.all(letters.map((letter) =>
        s.executor.run({
          callId: crypto.randomUUID(),
          command: s.policy.allowlist.get("sh")!,
          args: ["-c", script, "sh", letter],
          cwd: s.jail,
          redactor: NO_REDACTION,
        })
      ));
      for (const [index, outcome] of outcomes.entries()) {
        const letter = letters[index]!;
        assert.equal(outcome.code, "OK", outcome.reason);
        assert.equal(outcome.stdoutBytes, 300_000);
        assert.equal(outcome.stderrBytes, 200_000);
        assert.equal(outcome.stdout, `${letter}\n`.repeat(150_000), `call ${letter}'s stdout`);
        assert.equal(
          outcome.stderr,
          `${letter}${letter}\n`.repeat(200_000 / 3) + `${letter}${letter}`,
          `call ${letter}'s stderr`,
        );
      }
    } finally {
      await s.close();
    }
  });
}

for (const mode of ["none", "bwrap"] as const satisfies readonly SandboxMode[]) {
  Deno.test(`${mode}: eight calls in flight with large inputs each read exactly their own bytes, ended once`, async () => {
    const s = await setup({ mode, limits: { maxOutputBytes: 1_000_000 } });
    try {
      // Each input spans several frames, so the frames of every call
      // interleave on the helper's one stdin.
      const letters = ["A", "B", "C", "D", "E", "F", "G", "H"];
      const inputs = letters.map((letter, index) => `${letter}\n`.repeat(150_000 + index * 7));
      const outcomes = await Promise.all(letters.map((_, index) =>
        s.executor.run({
          callId: crypto.randomUUID(),
          command: s.policy.allowlist.get("sh")!,
          // The end of its input must come once: `cat` returns at it, and the
          // second `cat` would wait for more if the end were lost.
          args: ["-c", "cat; cat; echo end"],
          cwd: s.jail,
          redactor: NO_REDACTION,
          stdin: encode(inputs[index]!),
        })
      ));
      for (const [index, outcome] of outcomes.entries()) {
        assert.equal(outcome.code, "OK", outcome.reason);
        assert.equal(outcome.stdoutBytes, inputs[index]!.length + 4);
        assert.equal(outcome.stdout, `${inputs[index]}end\n`, `call ${letters[index]}'s input`);
      }
    } finally {
      await s.close();
    }
  });
}

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`${mode}: an argument the helper's request cannot carry (a NUL) is EXECUTOR_ERROR and runs nothing`, async () => {
    const s = await setup({ mode });
    try {
      await assertSandboxMode(s.executor, mode);
      const touchWith = (last: string) =>
        s.executor.run({
          callId: crypto.randomUUID(),
          command: s.policy.allowlist.get("sh")!,
          args: ["-c", `touch ${s.jail}/canary`, last],
          cwd: s.jail,
          redactor: NO_REDACTION,
        });
      // Split at the NUL, this would be a different command line.
      const out = await touchWith("a\0b");
      assert.equal(out.code, "EXECUTOR_ERROR");
      assert.match(out.reason, /hold a NUL byte or exceed the launcher's limits/);
      assert.equal(out.exitCode, null);
      assert.equal(await exists(`${s.jail}/canary`), false);
      // The same call without the NUL runs: the canary above can appear.
      const ran = await touchWith("ab");
      assert.equal(ran.code, "OK", ran.reason);
      assert.equal(await exists(`${s.jail}/canary`), true);
    } finally {
      await s.close();
    }
  });

  Deno.test(`${mode}: a command starts with no blocked and no ignored signal (Deno's children start with 32 and 33 ignored)`, async () => {
    const s = await setup({ mode });
    try {
      await assertSandboxMode(s.executor, mode);
      const out = await s.executor.run({
        callId: crypto.randomUUID(),
        command: s.policy.allowlist.get("cat")!,
        args: ["/proc/self/status"],
        cwd: s.jail,
        redactor: NO_REDACTION,
      });
      assert.equal(out.code, "OK", out.reason);
      assert.deepEqual(signalMasks(out.stdout), { blocked: NO_SIGNAL, ignored: NO_SIGNAL });
    } finally {
      await s.close();
    }
  });
}

Deno.test("a call whose working folder is gone is refused by its fork of the helper: EXECUTOR_ERROR", async () => {
  const s = await setup();
  try {
    const out = await s.executor.run({
      callId: "",
      redactor: NO_REDACTION,
      go: Promise.resolve(true),
      command: s.policy.allowlist.get("true")!,
      args: [],
      cwd: `${s.jail}/missing`,
    });
    assert.equal(out.code, "EXECUTOR_ERROR");
    assert.equal(out.reason, `Cannot run "true": the working directory ${s.jail}/missing is gone.`);
  } finally {
    await s.close();
  }
});

for (const mode of ["none", "bwrap"] as const satisfies readonly SandboxMode[]) {
  Deno.test(`${mode}: a serving helper killed under a running call ends that call with EXECUTOR_ERROR and its tree; the next call starts a new one`, async () => {
    const s = await setup({ mode });
    try {
      await assertSandboxMode(s.executor, mode);
      const run = (command: string, args: string[]) =>
        s.executor.run({
          callId: crypto.randomUUID(),
          command: s.policy.allowlist.get(command)!,
          args,
          cwd: s.jail,
          redactor: NO_REDACTION,
        });
      const script = `touch ${s.jail}/started; sleep 1; touch ${s.jail}/canary`;
      const running = run("sh", ["-c", script]);
      // The helper the startup probe ran through is the running call's parent.
      const helper = s.executor.helperPid();
      assert.ok(helper !== null);
      await waitUntil(() => exists(`${s.jail}/started`), "the call's start");
      await endServingHelper(s.executor, DEFAULT_LAUNCHER_TOOLS.spawn);
      const ended = await running;
      assert.equal(ended.code, "EXECUTOR_ERROR", ended.reason);
      assert.equal(
        ended.reason,
        'Cannot run "sh": the launcher helper ended during the call, and its process tree with it.',
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      assert.equal(await exists(`${s.jail}/canary`), false, "the call's tree outlived its helper");

      // The killed call's end made the next call's containment ahead: in a
      // new helper, never in the dead one (whose stdin nobody reads).
      // Bounded: a containment made in the dead helper would never end.
      let next: ExecOutcome | null = null;
      void run("true", []).then((outcome) => next = outcome);
      await waitUntil(() => next !== null, "the next call's end", 10_000);
      assert.equal(next!.code, "OK", next!.reason);
      const now = s.executor.helperPid();
      assert.ok(now !== null && now !== helper && await isServingHelper(now));
    } finally {
      // Bounded too: a call left in a dead helper would hold the shutdown forever.
      let closed = false;
      void s.close().then(() => closed = true);
      await waitUntil(() => closed, "the executor's shutdown", 10_000);
    }
  });
}

/** `pid`'s descendants (children first), each with its argv. */
async function descendantsOf(pid: number): Promise<{ pid: number; argv: string[] }[]> {
  const found: { pid: number; argv: string[] }[] = [];
  for (let parents = [pid]; parents.length > 0;) {
    const children = (await Promise.all(parents.map(childrenOf))).flat();
    found.push(...children);
    parents = children.map((child) => child.pid);
  }
  return found;
}

/** Whether `pid` still runs `argv` (a reused pid runs something else). */
async function stillRuns(pid: number, argv: readonly string[]): Promise<boolean> {
  const out = await new Deno.Command("sh", {
    args: ["-c", 'tr "\\0" "\\t" < /proc/"$1"/cmdline', "sh", String(pid)],
    stderr: "null",
  }).output();
  return decode(out.stdout) === argv.map((word) => `${word}\t`).join("");
}

Deno.test("a SIGKILLed server's serving helper ends with it, and the sandbox made ahead with it", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-serve-server-" }));
  await Deno.chmod(dir, 0o755);
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.writeTextFile(
      `${dir}/policy.toml`,
      `jail_root = "jail"\naudit_log = "audit.jsonl"\n[allowlist]\ncommands = ["true"]\n` +
        `[sandbox]\nmode = "bwrap"\n`,
    );
    const plan = await planLaunch(["serve", "--policy", `${dir}/policy.toml`], REPO);
    assert.ok(plan.ok, plan.ok ? "" : plan.message);
    // The server itself, under its flags, driven by the real SDK client.
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: [...plan.argv],
      env: serverEnv(dir),
      stderr: "ignore",
    });
    const client = new Client({ name: "serving-helper-test", version: "0" });
    await client.connect(transport);
    try {
      const ran = await client.callTool({ name: "run_command", arguments: { command: "true" } });
      const result = ran.structuredContent as { code: string };
      assert.equal(result.code, "OK", JSON.stringify(ran));
      const server = transport.pid;
      assert.ok(server !== null);
      const helpers = await servingHelpersOf(server);
      assert.equal(helpers.length, 1, "the server keeps one serving helper");
      // The next call's sandbox, made once this call's tree was gone, waits.
      let tree: { pid: number; argv: string[] }[] = [];
      await waitUntil(async () => {
        tree = await descendantsOf(helpers[0]!);
        return tree.some(({ argv }) => argv.includes("--request"));
      }, "the sandbox made ahead");
      // Its namespace's init (which executed bwrap) and the inner helper,
      // pid 1 of bwrap's own namespace (--as-pid-1), waiting for a request.
      assert.equal(tree.length, 2, JSON.stringify(tree));
      // Under the server's narrow permissions the host's merged-/usr links
      // still reach bwrap as symlinks (read by the helper), not as binds.
      if (Deno.lstatSync("/bin").isSymlink) {
        const bwrap = tree.find(({ argv }) => argv[0] === "/usr/bin/bwrap")!.argv;
        const at = bwrap.indexOf("/bin");
        assert.deepEqual(bwrap.slice(at - 2, at + 1), [
          "--symlink",
          Deno.readLinkSync("/bin"),
          "/bin",
        ]);
      }
      Deno.kill(server, "SIGKILL"); // our own child: the process the transport started
      await waitUntil(async () => !(await isServingHelper(helpers[0]!)), "the helper's end");
      // Every process of the waiting sandbox ends too: parent-death signals
      // down to its namespace's init, and the kernel for the rest.
      await waitUntil(async () => {
        for (const { pid, argv } of tree) if (await stillRuns(pid, argv)) return false;
        return true;
      }, "the waiting sandbox's end");
    } finally {
      await client.close().catch(() => {});
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
