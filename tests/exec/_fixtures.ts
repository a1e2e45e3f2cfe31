/**
 * Shared setup for executor, sandbox and process-tree tests: a real temp
 * jail (handed to uid 65534 when the tests run as root, so commands run as
 * that uid and may write it; searchable by everyone), a policy
 * with real resolved binaries, and helpers that find a run's processes on the
 * host through /proc (read by `_proc_probe.ts` in an all-access child).
 */
import { exists } from "../_helpers/exists.ts";
import { fileURLToPath } from "node:url";
import type { Limits, Policy, SandboxMode } from "../../src/config/types.ts";
import {
  createExecutor,
  DEFAULT_LAUNCHER_TOOLS,
  type ExecOutcome,
  type Executor,
} from "../../src/exec/mod.ts";
import type { CallLaunch } from "../../src/exec/mod.ts";
import { encodeSandboxRequest, ServingHelper } from "../../src/exec/serving_helper.ts";
import { createRedactor, type Redactor } from "../../src/redact/mod.ts";
import { makePolicy, TEST_LIMITS } from "../_helpers/policy.ts";
import { assertSandboxMode, prepareJail } from "../_helpers/jail.ts";
import { waitUntil } from "../_helpers/wait_until.ts";

/**
 * A redactor with redaction off: these tests read a command's output as it
 * was written; a test about redaction passes its own (`RunExtra.redactor`).
 */
export const NO_REDACTION: Redactor = createRedactor({
  enabled: false,
  entropyFallback: false,
  extraPatterns: [],
});

export interface Setup {
  readonly jail: string;
  readonly policy: Policy;
  readonly executor: Executor;
  /** Runs `name args...` in the jail (or `cwd`). */
  run(name: string, args: readonly string[], extra?: RunExtra): Promise<ExecOutcome>;
  close(): Promise<void>;
}

export interface RunExtra {
  readonly cwd?: string;
  readonly signal?: AbortSignal;
  readonly redactor?: Redactor;
}

export interface SetupOptions {
  readonly mode?: SandboxMode;
  readonly network?: "none" | "allowlist" | "host";
  readonly limits?: Partial<Limits>;
  readonly allow?: readonly string[];
}

const DEFAULT_ALLOW = [
  "sh",
  "bash",
  "cat",
  "echo",
  "true",
  "sleep",
  "ls",
  "env",
  "pwd",
  "printf",
  "head",
  "yes",
  "id",
  "dd",
  "setsid",
];

/** A temp jail owned by the uid commands will run as (`prepareJail`). */
export async function makeJail(): Promise<string> {
  const jail = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-exec-" }));
  await Deno.chmod(jail, 0o755);
  await prepareJail(jail);
  return jail;
}

/** An executor started on a private copy of one launcher tool (see `withToolCopy`). */
export interface ToolCopy {
  readonly executor: Executor;
  readonly policy: Policy;
  readonly jail: string;
  /** The copy the executor was started with: a test may remove or replace it. */
  readonly copy: string;
  /** The folder holding the copy (searchable by the jail's uid). */
  readonly tools: string;
  /** Runs `sh -c script` in the jail. */
  sh(callId: string, script: string): Promise<ExecOutcome>;
}

/**
 * Starts a real executor whose launcher tool `tool` (the helper, or bwrap
 * in bwrap mode) is a private copy, asserts the mode it runs in, and runs
 * `body` with it; the executor is shut down and everything is removed after.
 */
export async function withToolCopy<T>(
  tool: "spawn" | "bwrap",
  body: (copy: ToolCopy) => Promise<T>,
): Promise<T> {
  const jail = await makeJail();
  const tools = await Deno.makeTempDir();
  // The launcher runs as the jail's uid after the drop: it must reach the copy.
  await Deno.chmod(tools, 0o755);
  const copy = `${tools}/${tool}`;
  try {
    await Deno.copyFile(tool === "spawn" ? DEFAULT_LAUNCHER_TOOLS.spawn : "/usr/bin/bwrap", copy);
    await Deno.chmod(copy, 0o755);
    const mode = tool === "bwrap" ? "bwrap" : "none";
    const policy = makePolicy({
      jailRoot: jail,
      allow: ["sh"],
      overrides: {
        sandbox: {
          mode,
          network: "none",
          networkAllow: [],
          acceptPathCheckOnly: mode === "none",
          user: null,
        },
      },
    });
    const built = await createExecutor(policy, { tools: { [tool]: copy } });
    if (!built.ok) throw new Error(`startup failed: ${built.message}`);
    try {
      await assertSandboxMode(built.executor, mode);
      const sh = (callId: string, script: string) =>
        built.executor.run({
          callId,
          command: policy.allowlist.get("sh")!,
          args: ["-c", script],
          cwd: jail,
          redactor: NO_REDACTION,
        });
      return await body({ executor: built.executor, policy, jail, copy, tools, sh });
    } finally {
      await built.executor.shutdown();
    }
  } finally {
    await Deno.remove(jail, { recursive: true });
    await Deno.remove(tools, { recursive: true });
  }
}

/**
 * Starts a real executor on a private copy of `tool`, removes that copy
 * after startup (the launcher now breaks mid-call), runs `sh -c 'touch
 * canary'`, and returns the outcome and whether the canary appeared.
 */
export async function runWithToolRemovedAfterStartup(
  tool: "spawn" | "bwrap",
): Promise<{ outcome: ExecOutcome; canaryCreated: boolean }> {
  return await withToolCopy(tool, async ({ executor, jail, copy, sh }) => {
    await Deno.remove(copy);
    if (tool === "spawn") {
      // The serving helper the startup probe ran through still runs the
      // removed file's code; only a new one must come from the path. It is
      // our executor's child, checked to be the helper before the signal.
      await endServingHelper(executor, copy);
    }
    if (tool === "bwrap") {
      // A sandbox made ahead of this call, if bwrap was still there when it
      // was made, is a whole one (pid 2 of its own namespace); made after
      // the removal, it failed, and the call with it. The call after it
      // needs a new sandbox either way, and is the one under test.
      const ahead = await sh("0", "echo $$");
      const whole = ahead.code === "OK" && ahead.stdout === "2\n";
      if (!whole && ahead.code !== "CONTAINMENT_UNAVAILABLE") {
        throw new Error(`the sandbox made ahead ran, but not whole: ${JSON.stringify(ahead)}`);
      }
    }
    const outcome = await sh("1", "touch canary");
    await executor.shutdown();
    return { outcome, canaryCreated: await exists(`${jail}/canary`) };
  });
}

/**
 * Whether `pid` is a serving helper started from `path` (a reused pid is
 * another program).
 */
export async function isServingHelper(
  pid: number,
  path: string = DEFAULT_LAUNCHER_TOOLS.spawn,
): Promise<boolean> {
  // Through sh: the suite's narrow permissions do not let Deno read /proc.
  const out = await new Deno.Command("sh", {
    args: ["-c", 'tr "\\0" "\\t" < /proc/"$1"/cmdline', "sh", String(pid)],
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout) === `${path}\t--serve\t`;
}

/**
 * SIGKILLs `executor`'s serving helper (its own child, checked by its
 * command line just before) and waits until the executor has seen it end.
 */
export async function endServingHelper(
  executor: { helperPid(): number | null },
  path: string,
): Promise<void> {
  const pid = executor.helperPid();
  if (pid === null) throw new Error("no serving helper runs");
  if (!(await isServingHelper(pid, path))) throw new Error(`pid ${pid} is not a serving helper`);
  Deno.kill(pid, "SIGKILL");
  // The executor may start a new helper at once: in bwrap mode the next
  // call's sandbox is made ahead when a call ends, the killed one's too.
  await waitUntil(() => executor.helperPid() !== pid, "the executor to see its helper end");
}

/** Builds a policy and a real executor over a fresh jail; `close()` cleans up. */
export async function setup(options: SetupOptions = {}): Promise<Setup> {
  const jail = await makeJail();
  const policy = makePolicy({
    jailRoot: jail,
    allow: options.allow ?? DEFAULT_ALLOW,
    overrides: {
      sandbox: {
        mode: options.mode ?? "none",
        network: options.network ?? "none",
        networkAllow: [],
        // Mode none is these tests' own choice (the none chain under test),
        // made explicitly, as an operator would have to.
        acceptPathCheckOnly: (options.mode ?? "none") === "none",
        user: null,
      },
      limits: { ...TEST_LIMITS, ...options.limits },
    },
  });
  const built = await createExecutor(policy);
  if (!built.ok) {
    await Deno.remove(jail, { recursive: true });
    throw new Error(built.message);
  }
  const executor = built.executor;
  // No test may pass because its sandbox was silently not the one it asked for.
  await assertSandboxMode(
    executor,
    options.mode === "none" || options.mode === undefined ? "none" : "bwrap",
  );
  return {
    jail,
    policy,
    executor,
    run(name, args, extra = {}) {
      const command = policy.allowlist.get(name);
      if (command === undefined) throw new Error(`Test policy does not allow "${name}".`);
      return executor.run({
        callId: crypto.randomUUID(),
        command,
        args,
        cwd: extra.cwd ?? jail,
        redactor: extra.redactor ?? NO_REDACTION,
        ...(extra.signal === undefined ? {} : { signal: extra.signal }),
      });
    },
    async close() {
      await executor.shutdown();
      await Deno.remove(jail, { recursive: true });
    },
  };
}

/** A process as the /proc probe reports it (zombies have an empty argv). */
export interface ProcEntry {
  readonly pid: number;
  readonly uid: number | null;
  readonly argv: readonly string[];
}

const PROBE = fileURLToPath(new URL("./_proc_probe.ts", import.meta.url));

/**
 * The probe command for one query. Deno lets only an all-access process read
 * /proc, and the suite runs under narrow permissions, so the reading is done
 * by `_proc_probe.ts` in a child started with `-A` (this needs only run).
 */
function probe(query: Record<string, unknown>, stdin: "null" | "piped" = "null"): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-config", "-A", PROBE],
    env: { HTMCP_PROC_QUERY: JSON.stringify(query) },
    stdin,
    stdout: "piped",
    stderr: "piped",
  });
}

async function askProbe<T>(query: Record<string, unknown>): Promise<T> {
  const out = await probe(query).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`The /proc probe failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return JSON.parse(text) as T;
}

/** Every host process (but the probe itself), read from /proc. */
export function listProcesses(): Promise<ProcEntry[]> {
  return askProbe<ProcEntry[]>({ op: "list" });
}

/**
 * Polls until `count` host processes carry `marker` as one argv word, or
 * throws after `timeoutMs`. Only processes whose argv[0] is the marked program
 * itself count (no `--` word), so the launcher chain, whose argv repeats the
 * whole command, is not counted; zombies have no cmdline.
 */
export async function waitForMarker(
  marker: string,
  count: number,
  timeoutMs = 3_000,
): Promise<number[]> {
  const pids = await askProbe<number[]>({ op: "wait", marker, count, timeoutMs });
  if (pids.length >= count) return pids;
  throw new Error(`Expected ${count} processes with "${marker}", saw ${pids.length}.`);
}

/**
 * The state letter of `/proc/PID/stat` ("R", "S", "Z"...) of each pid, or
 * null when the pid does not exist at all: null means dead and reaped, "Z"
 * means dead but not reaped (a zombie, for which `kill -0` still succeeds).
 */
export function procStates(pids: readonly number[]): Promise<(string | null)[]> {
  return askProbe<(string | null)[]>({ op: "state", pids });
}

/** {@link procStates} for one pid. */
export async function procState(pid: number): Promise<string | null> {
  const [state] = await procStates([pid]);
  return state ?? null;
}

/** Asserts every pid is gone from /proc: not alive and not a zombie. */
export async function assertAllReaped(pids: readonly number[]): Promise<void> {
  const states = await procStates(pids);
  const left = pids.map((pid, i) => [pid, states[i] ?? null] as const).filter(([, s]) =>
    s !== null
  );
  if (left.length > 0) {
    throw new Error(`Processes still present after return: ${JSON.stringify(left)}.`);
  }
}

/** A running sampler of a process count; `stop()` returns the largest count seen. */
export interface PeakSampler {
  stop(): Promise<number>;
}

/**
 * Samples every `intervalMs`, from before this resolves until `stop()`, the
 * number of host processes of real uid `uid` whose command line contains
 * `marker`.
 */
export async function samplePeak(
  uid: number,
  marker: string,
  intervalMs: number,
): Promise<PeakSampler> {
  const child = probe({ op: "peak", uid, marker, intervalMs }, "piped").spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await lines.read();
    if (done) break;
    text += value;
  }
  if (text !== "ready\n") {
    await lines.cancel();
    await child.stdin.close();
    const stderr = await new Response(child.stderr).text();
    await child.status;
    throw new Error(`The /proc probe failed: ${text}${stderr}`);
  }
  return {
    async stop() {
      await child.stdin.close();
      let rest = "";
      for (;;) {
        const { value, done } = await lines.read();
        if (done) break;
        rest += value;
      }
      const stderr = await new Response(child.stderr).text();
      const status = await child.status;
      if (!status.success) throw new Error(`The /proc probe failed: ${stderr}`);
      return JSON.parse(rest) as number;
    },
  };
}

/** A marker unique to this test run, usable as a `sleep` duration (`sleep 300.<n>`). */
export function uniqueSleep(): string {
  const digits = String(Math.floor(Math.random() * 1e9)).padStart(9, "0");
  return `300.${digits}`;
}

/** A call's end and everything it wrote. */
export interface LaunchOutput {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A launch running as the one call of a serving helper of its own. */
export interface StartedLaunch {
  /** The serving helper's pid: the call's outer, for a test that kills it. */
  readonly helperPid: number;
  /** Waits for the call's end and its output, then lets the helper go. */
  output(): Promise<LaunchOutput>;
}

/**
 * Runs `helper --serve` under `via` (a program and its options, such as
 * setpriv's): through a script in a folder of its own, since the serving
 * helper is started by its path alone. Returns the script and its folder.
 */
async function helperUnder(via: readonly string[]): Promise<{ path: string; dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-via-" });
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const path = `${dir}/serve`;
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\nexec ${[...via, DEFAULT_LAUNCHER_TOOLS.spawn].map(quote).join(" ")} "$@"\n`,
  );
  await Deno.chmod(dir, 0o755);
  await Deno.chmod(path, 0o755);
  return { path, dir };
}

/**
 * Starts `launch` as the executor starts a call: in a serving helper
 * (`htmcp-spawn --serve`), here one of its own, optionally started under
 * `via`. In bwrap mode the call's stdin gets the sandbox's request (or
 * `options.stdin`, for a test of a malformed one), then closes (its
 * backstop stays unstarted: the executor starts it at the go).
 */
export async function startLaunch(
  launch: CallLaunch,
  options: { via?: readonly string[]; stdin?: Uint8Array } = {},
): Promise<StartedLaunch> {
  const under = options.via === undefined ? null : await helperUnder(options.via);
  const helper = new ServingHelper(under?.path ?? DEFAULT_LAUNCHER_TOOLS.spawn);
  const chunks = { stdout: [] as Uint8Array[], stderr: [] as Uint8Array[] };
  const [, ...rest] = launch.argv;
  const call = helper.start(launch.cwd, launch.env, rest, "piped", {
    output: (stream, bytes) => chunks[stream].push(bytes.slice()),
  });
  const sandbox = launch.sandbox;
  if (options.stdin !== undefined) call.write(options.stdin);
  else if (sandbox !== null) {
    call.write(encodeSandboxRequest(sandbox.cwd, sandbox.env, sandbox.args, sandbox.stdin));
  }
  call.closeInput();
  const helperPid = helper.pid;
  if (helperPid === null) throw new Error("the serving helper did not start");
  const text = (parts: Uint8Array[]) => {
    const decoder = new TextDecoder();
    return parts.map((part) => decoder.decode(part, { stream: true })).join("") + decoder.decode();
  };
  return {
    helperPid,
    async output() {
      // The executor's own timers keep a server alive while a call runs; the
      // helper's process alone does not (unreferenced: it must never keep a
      // finished server alive), so this wait holds one of its own.
      const alive = setInterval(() => {}, 60_000);
      const [status] = await Promise.all([call.status, call.drained]).finally(() =>
        clearInterval(alive)
      );
      await helper.close();
      if (under !== null) await Deno.remove(under.dir, { recursive: true });
      return { code: status.code, stdout: text(chunks.stdout), stderr: text(chunks.stderr) };
    },
  };
}

/** `startLaunch`, to its end: its exit status and output. */
export async function spawnLaunch(
  launch: CallLaunch,
  options: { via?: readonly string[]; stdin?: Uint8Array } = {},
): Promise<LaunchOutput> {
  return await (await startLaunch(launch, options)).output();
}

/**
 * Runs `htmcp-spawn OPTIONS -- ARGV` as a call of a serving helper of its
 * own, in `cwd` with an empty environment and stdin at end of file: for
 * the helper's own options, which no launch the executor builds has.
 */
export async function helperCall(
  options: readonly string[],
  argv: readonly string[],
  cwd = "/",
): Promise<LaunchOutput> {
  return await spawnLaunch({
    argv: [DEFAULT_LAUNCHER_TOOLS.spawn, ...options, "--", ...argv],
    cwd,
    env: {},
    sandbox: null,
  });
}
