/**
 * The serving helper (`htmcp-spawn --serve`): its frames, that a call runs
 * nothing until its whole request and its go came, that calls in flight
 * are kept apart, that every call of an executor is a fork of one helper,
 * and that neither the helper nor any call outlives the server.
 */
import assert from "node:assert/strict";
import type { SandboxMode } from "../../src/config/types.ts";
import { DEFAULT_LAUNCHER_TOOLS } from "../../src/exec/mod.ts";
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
import { prepareJail } from "../_helpers/jail.ts";
import { initializeMessage, REPO, serverEnv } from "../_helpers/stdio_harness.ts";
import { NO_REDACTION, setup } from "./_fixtures.ts";

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

/** Whether `pid` is still a serving helper (a reused pid is another program). */
async function isServingHelper(pid: number): Promise<boolean> {
  const out = await new Deno.Command("sh", {
    args: ["-c", 'tr "\\0" "\\t" < /proc/"$1"/cmdline', "sh", String(pid)],
    stderr: "null",
  }).output();
  return decode(out.stdout) === `${HELPER}\t--serve\t`;
}

interface CallSeen {
  stdout: string;
  stderr: string;
  closed: string[];
  status: number | null;
}

/** A serving helper we drive with raw frames, and what it said of each call. */
function rawHelper() {
  const child = new Deno.Command(HELPER, {
    args: ["--serve"],
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
  return {
    calls,
    send: (bytes: Uint8Array) => writer.write(bytes),
    /** Waits until call `id` has ended and both its streams closed. */
    async ended(id: number, timeoutMs = 10_000): Promise<CallSeen> {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const call = calls.get(id);
        if (call !== undefined && call.status !== null && call.closed.length === 2) return call;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`call ${id} did not end`);
    },
    /** Closes its stdin and waits for it to exit; its status and stderr. */
    async close() {
      await writer.close().catch(() => {});
      const [status, stderr] = await Promise.all([
        child.status,
        new Response(child.stderr).text(),
        reading,
      ]);
      return { code: status.code, stderr };
    },
  };
}

/** An R frame: one command in `cwd`, the helper's options before `--`. */
function start(id: number, cwd: string, options: string[], argv: string[], stdin = "p") {
  const request = encodeHelperRequest(cwd, { PATH: "/usr/bin:/bin" }, [...options, "--", ...argv]);
  assert.ok(request !== null);
  return encodeFrame(R, id, new Uint8Array([...encode(stdin), ...request]));
}

async function tempDir(): Promise<string> {
  return await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-serve-" }));
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
  const dir = await tempDir();
  const helper = rawHelper();
  try {
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
  } finally {
    await helper.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("calls in flight in one serving helper keep their own cwd, input, output and status", async () => {
  const dirs = [await tempDir(), await tempDir()];
  const helper = rawHelper();
  try {
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
  } finally {
    await helper.close();
    for (const dir of dirs) await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a served call sees only its own three descriptors, not the helper's or another call's pipes", async () => {
  const dir = await tempDir();
  const helper = rawHelper();
  try {
    await helper.send(start(21, dir, [PIDNS], ["/bin/sleep", "5"]));
    await helper.send(start(22, dir, [PIDNS], ["/bin/ls", "/proc/self/fd"], "n"));
    const listed = await helper.ended(22);
    // ls's own directory handle is the fourth entry.
    assert.deepEqual(listed.stdout.trim().split("\n").map(Number).sort(), [0, 1, 2, 3]);
    await helper.send(encodeFrame(K, 21, encode("14")));
    assert.equal(commandStatus((await helper.ended(21)).status!).code, 137);
  } finally {
    await helper.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the serving helper forwards only the kill signals: a stop request is ignored", async () => {
  const dir = await tempDir();
  const helper = rawHelper();
  try {
    await helper.send(start(31, dir, [PIDNS], ["/bin/sh", "-c", "read x; echo done"]));
    await helper.send(encodeFrame(K, 31, encode("19"))); // SIGSTOP
    await helper.send(encodeFrame(I, 31, encode("\n")));
    await helper.send(encodeFrame(E, 31, new Uint8Array()));
    const call = await helper.ended(31);
    assert.equal(call.stdout, "done\n");
    assert.equal(commandStatus(call.status!).code, 0);
  } finally {
    await helper.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("end of file on its stdin stops every call still running, and the helper exits once their trees are gone", async () => {
  const dir = await tempDir();
  const helper = rawHelper();
  try {
    // The command outlives a kill of its parent only if the namespace does not take it.
    const script = `(sleep 1; touch ${dir}/canary) & echo started; wait`;
    await helper.send(start(41, dir, [PIDNS], ["/bin/sh", "-c", script], "n"));
    const deadline = Date.now() + 5_000;
    while (!(helper.calls.get(41)?.stdout ?? "").includes("started") && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const { code } = await helper.close();
    assert.equal(code, 0);
    assert.equal(commandStatus(helper.calls.get(41)!.status!).code, 137);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(await exists(`${dir}/canary`), false, "a process of the call outlived the helper");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a malformed frame ends the serving helper with 125 and a line naming it, having run nothing", async () => {
  const dir = await tempDir();
  const helper = rawHelper();
  try {
    await helper.send(encode("Rzzzzzzzz00000000"));
    const { code, stderr } = await helper.close();
    assert.equal(code, 125);
    assert.match(stderr, /^htmcp-spawn: serve: malformed frame/);
    assert.equal(helper.calls.size, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
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

Deno.test("a serving helper killed under a running call ends that call with EXECUTOR_ERROR and its tree; the next call starts a new one", async () => {
  const s = await setup();
  try {
    const run = (command: string, args: string[]) =>
      s.executor.run({
        callId: crypto.randomUUID(),
        command: s.policy.allowlist.get(command)!,
        args,
        cwd: s.jail,
        redactor: NO_REDACTION,
      });
    const running = run("sh", ["-c", `sleep 1; touch ${s.jail}/canary`]);
    let helper = s.executor.helperPid();
    const deadline = Date.now() + 5_000;
    while (helper === null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      helper = s.executor.helperPid();
    }
    // Our own executor's child, checked to be the helper just before the signal.
    assert.ok(helper !== null && await isServingHelper(helper));
    Deno.kill(helper, "SIGKILL");
    const ended = await running;
    assert.equal(ended.code, "EXECUTOR_ERROR", ended.reason);
    assert.equal(
      ended.reason,
      'Cannot run "sh": the launcher helper ended during the call, and its process tree with it.',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.equal(await exists(`${s.jail}/canary`), false, "the call's tree outlived its helper");

    const next = await run("true", []);
    assert.equal(next.code, "OK", next.reason);
    const now = s.executor.helperPid();
    assert.ok(now !== null && now !== helper && await isServingHelper(now));
  } finally {
    await s.close();
  }
});

Deno.test("a SIGKILLed server's serving helper ends with it", async () => {
  const dir = await tempDir();
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
    const server = new Deno.Command(Deno.execPath(), {
      args: [...plan.argv],
      env: serverEnv(dir),
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const writer = server.stdin.getWriter();
    const lines = server.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const send = (message: unknown) =>
      writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
    let buffered = "";
    const answer = async (id: number) => {
      while (true) {
        const newline = buffered.indexOf("\n");
        if (newline >= 0) {
          const message = JSON.parse(buffered.slice(0, newline));
          buffered = buffered.slice(newline + 1);
          if (message.id === id) return message;
          continue;
        }
        const { value, done } = await lines.read();
        if (done) throw new Error("the server closed its stdout");
        buffered += value;
      }
    };
    try {
      await send(initializeMessage(1, "serving-helper-test"));
      await answer(1);
      await send({ jsonrpc: "2.0", method: "notifications/initialized" });
      await send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "run_command", arguments: { command: "true" } },
      });
      const ran = await answer(2);
      assert.equal(ran.result.structuredContent.code, "OK", JSON.stringify(ran));
      const helpers = await servingHelpersOf(server.pid);
      assert.equal(helpers.length, 1, "the server keeps one serving helper");
      server.kill("SIGKILL"); // our own child, by its handle
      await server.status;
      const deadline = Date.now() + 5_000;
      while (await isServingHelper(helpers[0]!) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(await isServingHelper(helpers[0]!), false, "the helper outlived the server");
    } finally {
      await writer.close().catch(() => {});
      await lines.cancel().catch(() => {});
      try {
        server.kill("SIGKILL");
      } catch {
        // already ended
      }
      await server.status;
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
