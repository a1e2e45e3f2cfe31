/**
 * The helper started ahead of its call (`htmcp-spawn --request`): what it
 * reads, that it runs nothing until a whole request and its go came, that a
 * call it serves is the call as asked, and that it never outlives the server.
 */
import assert from "node:assert/strict";
import type { SandboxMode } from "../../src/config/types.ts";
import { DEFAULT_LAUNCHER_TOOLS } from "../../src/exec/mod.ts";
import { encodeHelperRequest, MAX_REQUEST_BYTES } from "../../src/exec/warm_helper.ts";
import { planLaunch } from "../../scripts/launch.ts";
import { exists } from "../_helpers/exists.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { initializeMessage, REPO, serverEnv } from "../_helpers/stdio_harness.ts";
import { NO_REDACTION, setup } from "./_fixtures.ts";

const HELPER = DEFAULT_LAUNCHER_TOOLS.spawn;
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

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

/** The pids of `pid`'s children that are idle helpers. */
async function idleHelpersOf(pid: number): Promise<number[]> {
  return (await childrenOf(pid))
    .filter(({ argv }) => argv.length === 2 && argv[0] === HELPER && argv[1] === "--request")
    .map((child) => child.pid);
}

/** Whether `pid` is still an idle helper (a reused pid is another program). */
async function isIdleHelper(pid: number): Promise<boolean> {
  const out = await new Deno.Command("sh", {
    args: ["-c", 'tr "\\0" "\\t" < /proc/"$1"/cmdline', "sh", String(pid)],
    stderr: "null",
  }).output();
  return decode(out.stdout) === `${HELPER}\t--request\t`;
}

/** Runs the helper in request mode on `stdin`; its status and output. */
async function requestMode(stdin: Uint8Array) {
  const child = new Deno.Command(HELPER, {
    args: ["--request"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(stdin).catch(() => {});
  await writer.close().catch(() => {});
  const out = await child.output();
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("encodeHelperRequest() writes the length, then the cwd, the env count, the entries and the arguments, each NUL-terminated", () => {
  const bytes = encodeHelperRequest("/srv/jail", { A: "1", PATH: "/usr/bin" }, [
    "--go",
    "--",
    "/bin/true",
  ]);
  assert.ok(bytes !== null);
  const body = "/srv/jail\x002\x00A=1\x00PATH=/usr/bin\x00--go\x00--\x00/bin/true\x00";
  assert.equal(decode(bytes), body.length.toString(16).padStart(8, "0") + body);
});

Deno.test("encodeHelperRequest() refuses a NUL anywhere and a request over the helper's limit: the call spawns its own helper", () => {
  assert.equal(encodeHelperRequest("/srv\0/jail", {}, ["--", "/bin/true"]), null);
  assert.equal(encodeHelperRequest("/srv", { A: "1\0B=2" }, ["--", "/bin/true"]), null);
  assert.equal(encodeHelperRequest("/srv", {}, ["--", "/bin/echo", "a\0--setuid=0"]), null);
  assert.equal(
    encodeHelperRequest("/srv", {}, ["--", "/bin/echo", "x".repeat(MAX_REQUEST_BYTES)]),
    null,
  );
});

Deno.test("an idle helper let go (end of file before a whole request) exits 125 having run nothing and said nothing", async () => {
  for (const stdin of ["", "0000", "00000010/tmp\0"]) {
    const out = await requestMode(new TextEncoder().encode(stdin));
    assert.deepEqual(out, { code: 125, stdout: "", stderr: "" }, JSON.stringify(stdin));
  }
});

Deno.test("a whole request without its go byte runs nothing: the canary is never created", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-warm-" }));
  try {
    const canary = `${dir}/canary`;
    const request = encodeHelperRequest(dir, {}, [
      "--pidns=root",
      "--go-null",
      "--",
      "/bin/sh",
      "-c",
      `touch ${canary}`,
    ])!;
    const out = await requestMode(request);
    assert.equal(out.code, 125);
    assert.equal(await exists(canary), false, "the command ran without its go");
    // The same request with its go runs it: the test above can fail.
    const ran = await requestMode(new Uint8Array([...request, "g".charCodeAt(0)]));
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(await exists(canary), true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a malformed request is refused with 125 and a line naming it, having run nothing", async () => {
  const cases: [string, RegExp][] = [
    ["zzzzzzzz", /--request length/],
    ["00000005/tmp\0", /no working folder or environment count/],
    ["00000007/tmp\x009\0", /environment count/],
    ["00000004/tmp", /not terminated/],
    ["00000007/tmp\x000\0", /no command after --/],
  ];
  for (const [stdin, reason] of cases) {
    const out = await requestMode(new TextEncoder().encode(stdin));
    assert.equal(out.code, 125, JSON.stringify(stdin));
    assert.equal(out.stdout, "");
    assert.match(out.stderr, reason);
  }
});

for (const mode of ["none", "bwrap"] as const satisfies readonly SandboxMode[]) {
  Deno.test(`${mode}: the call after the first is served by the helper started ahead, with its own cwd, env and argv`, async () => {
    const s = await setup({ mode, warmHelper: true });
    try {
      await Deno.mkdir(`${s.jail}/sub`);
      assert.deepEqual(await idleHelpersOf(Deno.pid), [], "none before the first call");
      const first = await s.executor.run({
        callId: crypto.randomUUID(),
        command: s.policy.allowlist.get("true")!,
        args: [],
        cwd: s.jail,
        redactor: NO_REDACTION,
        go: Promise.resolve(true),
      });
      assert.equal(first.code, "OK", first.reason);
      const idle = await idleHelpersOf(Deno.pid);
      assert.equal(idle.length, 1, "one helper waits for the next call");

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

      assert.equal(await isIdleHelper(idle[0]!), false, "the idle helper served the second call");
      const next = await idleHelpersOf(Deno.pid);
      assert.equal(next.length, 1);
      assert.notEqual(next[0], idle[0]);
    } finally {
      await s.close();
    }
    assert.deepEqual(await idleHelpersOf(Deno.pid), [], "shutdown lets the idle helper go");
  });
}

Deno.test("a helper started ahead that finds the working folder gone answers as a spawn would: EXECUTOR_ERROR", async () => {
  const s = await setup({ warmHelper: true });
  try {
    const go = { callId: "", redactor: NO_REDACTION, go: Promise.resolve(true) };
    await s.executor.run({
      ...go,
      command: s.policy.allowlist.get("true")!,
      args: [],
      cwd: s.jail,
    });
    assert.equal((await idleHelpersOf(Deno.pid)).length, 1);
    const out = await s.executor.run({
      ...go,
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

Deno.test("a SIGKILLed server's idle helper ends with it (its stdin closes), having run nothing", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-warm-server-" }));
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
      await send(initializeMessage(1, "warm-helper-test"));
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
      const idle = await idleHelpersOf(server.pid);
      assert.equal(idle.length, 1, "the server keeps one helper ready");
      server.kill("SIGKILL"); // our own child, by its handle
      await server.status;
      const deadline = Date.now() + 5_000;
      while (await isIdleHelper(idle[0]!) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(await isIdleHelper(idle[0]!), false, "the idle helper outlived the server");
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
