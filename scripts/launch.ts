/**
 * `deno task htmcp ARGS`: runs `src/main.ts ARGS` under exactly the Deno
 * permission set generated from the policy, never `-A`.
 *
 * The launcher itself needs broad permissions (it reads a policy that may be
 * anywhere and resolves its commands), so it does only that: load the policy,
 * build the set, spawn `deno run <flags> src/main.ts ARGS` with stdio
 * inherited (the MCP stream passes straight through: no bridge, no per-call
 * cost), forward termination signals, and exit with the child's status.
 *
 * With `HTMCP_LAUNCH_EXEC=1` (the installed command's script) it spawns
 * nothing: it prints the same start as a shell fragment (`renderExecFragment`)
 * and exits, and the script `exec`s the server, so one process remains.
 *
 * Per verb: `serve` (the default), `explain`, `check`, `permissions`,
 * `systemd` and `auth` run under the policy's set; `audit verify FILE...` and
 * `audit head FILE` may read those files only; `version` and `--help` get no permission at all.
 *
 * @module
 */
// First: while the installed command records this run for its start cache,
// every call into Deno from any module below must already be recorded.
import { LAUNCH_EXEC, START_CACHE, START_RECORDER, type StartRecorder } from "./_start_record.ts";
import { fromFileUrl, resolve } from "../src/path/mod.ts";
import { shQuote } from "./_sh_quote.ts";
import { encodeEntry, observeFacts, writeEntry } from "./_start_cache.ts";
import { loadPolicy } from "../src/config/mod.ts";
import { processEnv } from "../src/cli/env.ts";
import { missingPolicyMessage, parseCommandLine, POLICY_VERBS } from "../src/cli/args.ts";
import { ensureLauncherBuilt } from "./build_launcher.ts";
import { buildPermissionSet } from "../src/permissions/build.ts";
import {
  DEFAULT_IMPORT_HOSTS,
  LAZY_DYNAMIC_IMPORTS,
  renderDenoFlags,
} from "../src/permissions/render_flags.ts";
import { superviseChild } from "../src/permissions/reexec.ts";

/**
 * The server program and how Deno loads it: bundled beside a bundled
 * launcher (`deno task install`: `dist/scripts/launch.js` starts
 * `dist/src/main.js`, which needs no config), else this checkout's source
 * under its deno.json.
 */
const PROGRAM: readonly string[] = import.meta.url.endsWith(".js")
  ? [
    LAZY_DYNAMIC_IMPORTS,
    "--no-config",
    fromFileUrl(new URL("../src/main.js", import.meta.url)),
  ]
  : [
    "--config",
    fromFileUrl(new URL("../deno.json", import.meta.url)),
    fromFileUrl(new URL("../src/main.ts", import.meta.url)),
  ];

/** Flags for a verb that touches nothing: deny the implicit remote imports too. */
const NOTHING = Object.freeze([
  "--no-prompt",
  "--deny-net",
  "--deny-sys",
  "--deny-ffi",
  `--deny-import=${DEFAULT_IMPORT_HOSTS.join(",")}`,
]);

export type LaunchPlan =
  | { readonly ok: true; readonly argv: readonly string[] }
  | { readonly ok: false; readonly message: string; readonly usage: boolean };

/**
 * Decides the exact `deno` argv for `args` (without spawning anything).
 * The command line is checked first with the same parser as `src/main.ts`,
 * so `--polcy` or a missing `--policy` gets the CLI's own sentence, not the
 * loader's complaint about whatever key it happened to read first.
 *
 * @param args The htmcp arguments, as given to `deno task htmcp`.
 * @param cwd The folder relative paths resolve against.
 * @returns The argv (after the deno executable), or why it cannot run
 *   (`usage` for a command-line mistake: exit 2, like the CLI).
 */
export async function planLaunch(args: readonly string[], cwd: string): Promise<LaunchPlan> {
  const tail = [...PROGRAM, ...args];
  const line = parseCommandLine(args);
  if (!line.ok) return { ok: false, message: line.message, usage: true };
  if (line.action !== "run") return { ok: true, argv: ["run", ...NOTHING, ...tail] };
  // `policy diff` compares two policies (each with its own jail) and may
  // replay an audit log, `policy suggest` reads a log: they read, and
  // nothing else (no write, run or net).
  const policySubverb = line.verb === "policy" ? args[1] : undefined;
  if (policySubverb === "diff" || policySubverb === "suggest") {
    return { ok: true, argv: ["run", ...NOTHING, "--allow-read", "--allow-env=HTMCP_*", ...tail] };
  }
  // `htmcp policy test|lint FILE` names its policy as a positional argument
  // and runs under that policy's own set, as the server would.
  const positionalPolicy = policySubverb !== undefined ? line.parsed.positionals[0] : undefined;
  // `audit key` reads (and on first use creates) the signing key in the
  // policy's state dir: it runs under the policy's own set, as the server would.
  const auditKey = line.verb === "audit" && args[1] === "key";
  if (!POLICY_VERBS.has(line.verb) && positionalPolicy === undefined && !auditKey) {
    // `audit verify|head|show|tail|stats FILE...` may read those files (and a
    // verify's checkpoint and key files), nothing else.
    const readsLogs = line.verb === "audit" &&
      ["verify", "head", "show", "tail", "stats"].includes(args[1] ?? "");
    if (readsLogs && line.parsed.positionals.length > 0) {
      const named = [
        ...line.parsed.positionals,
        ...["--checkpoints", "--key"].flatMap((flag) => line.parsed.values.get(flag) ?? []),
      ];
      const files = named.map((file) => resolve(cwd, file)).join(",");
      return { ok: true, argv: ["run", ...NOTHING, `--allow-read=${files}`, ...tail] };
    }
    return { ok: true, argv: ["run", ...NOTHING, ...tail] };
  }
  const env = processEnv();
  const policyFlag = positionalPolicy ?? line.parsed.values.get("--policy");
  const missing = missingPolicyMessage(policyFlag, env);
  if (missing !== null) return { ok: false, message: missing, usage: true };
  const loaded = await loadPolicy({
    policyFile: policyFlag === undefined ? null : resolve(cwd, policyFlag),
    env,
  });
  if (!loaded.ok) return { ok: false, message: loaded.message, usage: false };
  const listen = line.parsed.values.get("--http");
  const built = await buildPermissionSet(loaded.policy, listen === undefined ? {} : { listen });
  if (!built.ok) return { ok: false, message: built.reason, usage: false };
  const flags = renderDenoFlags(built.set);
  // A printed unit names the npm cache its `deno run` needs; only the verbs
  // that print one may read where that cache is (the server never needs to).
  const printsUnit = line.verb === "systemd" || line.verb === "permissions";
  // `approvals allow|deny` records who answered: the OS user's name and uid.
  const answers = line.verb === "approvals";
  // `approvals allow ID --always` writes the always-allow file (a temporary
  // file beside it, then a rename): the one grant of write there, ever.
  const alwaysFile = loaded.policy.approval?.alwaysAllowFile ?? null;
  const writesAlways = answers && args[1] === "allow" && line.parsed.switches.has("--always") &&
    alwaysFile !== null;
  const verbFlags = printsUnit ? withEnvName(flags, "DENO_DIR") : answers
    ? [
      ...withEnvName(withEnvName(flags, "USER"), "LOGNAME"),
      "--allow-sys=uid",
      ...(writesAlways ? [`--allow-write=${alwaysFile},${alwaysFile}.htmcp-tmp`] : []),
    ]
    : flags;
  return { ok: true, argv: ["run", ...verbFlags, ...tail] };
}

/** `flags` with `name` added to the `--allow-env` grant (or a grant of its own). */
function withEnvName(flags: readonly string[], name: string): string[] {
  const index = flags.findIndex((flag) => flag.startsWith("--allow-env="));
  if (index === -1) return [...flags, `--allow-env=${name}`];
  return flags.map((flag, i) => i === index ? `${flag},${name}` : flag);
}

/**
 * The server cannot read its descriptor limit under its permission set
 * (Deno has no getrlimit; /proc needs all permissions), so the launcher reads
 * its own soft limit, which the child inherits, and passes it on.
 */
function fdLimitEnv(): Record<string, string> {
  try {
    const line = Deno.readTextFileSync("/proc/self/limits").split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.slice("Max open files".length).trim().split(/\s+/)[0];
    return soft !== undefined && /^\d+$/.test(soft) ? { HTMCP_FD_LIMIT: soft } : {};
  } catch {
    return {};
  }
}

/**
 * The start as a POSIX shell fragment for the installed command's script to
 * `eval` before its `exec "$deno" "$@"`: the folder, the added variables, and
 * the argv as the positional parameters. Every value is single-quoted, so a
 * policy path or argument holding `'`, `$`, `;` or a newline stays one word.
 *
 * @param argv The argv after the deno executable.
 * @param cwd The folder the server runs in.
 * @param env Variables to add to the environment the server inherits.
 * @returns The fragment, one statement a line.
 */
export function renderExecFragment(
  argv: readonly string[],
  cwd: string,
  env: Readonly<Record<string, string>>,
): string {
  const lines = [`cd -- ${shQuote(cwd)}`];
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(name)) throw new RangeError(`Bad variable name "${name}".`);
    lines.push(`${name}=${shQuote(value)}`, `export ${name}`);
  }
  lines.push(`set -- ${argv.map(shQuote).join(" ")}`);
  return lines.join("\n") + "\n";
}

/** The server's start: where, with which added variables, and its argv after the deno executable. */
type Start =
  | {
    readonly ok: true;
    readonly argv: string[];
    readonly cwd: string;
    readonly env: Record<string, string>;
  }
  | { readonly ok: false; readonly message: string; readonly code: number };

/** Decides the server's start for `args`, building the helper first when it is missing or stale. */
async function planStart(args: readonly string[]): Promise<Start> {
  // `deno task` runs in the folder of deno.json; INIT_CWD is where the
  // operator typed the command, which their relative paths mean.
  const cwd = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  // The server refuses to start without the launcher helper built from this
  // checkout's source: build it first when missing or stale (nothing goes to
  // stdout, which is the MCP stream, or the installed command's plan).
  const launcher = await ensureLauncherBuilt();
  if (launcher !== null) return { ok: false, message: launcher, code: 1 };
  const plan = await planLaunch(args, cwd);
  if (!plan.ok) return { ok: false, message: plan.message, code: plan.usage ? 2 : 1 };
  // The installed command (`deno task install`) runs offline: its server must
  // not fetch either.
  const offline = Deno.env.get("HTMCP_CACHED_ONLY") === "1";
  const argv = offline ? ["run", "--cached-only", ...plan.argv.slice(1)] : [...plan.argv];
  return { ok: true, argv, cwd, env: fdLimitEnv() };
}

/**
 * Writes the start cache's entry for `fragment` (`_start_cache.ts`) when the
 * run that printed it was recorded untainted and a second run, each followed
 * by a reading of the facts, agrees on the start, the facts and the reading.
 */
async function recordStart(
  recorder: StartRecorder,
  cache: NonNullable<typeof START_CACHE>,
  fragment: string,
) {
  const first = recorder.stop();
  if (first.taints.length > 0) return;
  const reading = await observeFacts(cache.tool, first.facts);
  recorder.start();
  const again = await planStart(Deno.args);
  const second = recorder.stop();
  if (
    reading === null || !again.ok || second.taints.length > 0 ||
    renderExecFragment(again.argv, again.cwd, again.env) !== fragment ||
    JSON.stringify(second.facts) !== JSON.stringify(first.facts) ||
    await observeFacts(cache.tool, second.facts) !== reading
  ) return;
  let text: string;
  try {
    text = encodeEntry({
      salt: cache.salt,
      cwd: Deno.cwd(),
      args: Deno.args,
      facts: first.facts,
      reading,
      start: fragment,
    });
  } catch {
    return; // a NUL in an argument: such a start is not kept
  }
  await writeEntry(cache.entry, text);
}

if (import.meta.main) {
  const start = await planStart(Deno.args);
  if (!start.ok) {
    console.error(`htmcp: ${start.message}`);
    Deno.exit(start.code);
  }
  if (LAUNCH_EXEC) {
    // The installed command's script execs the server itself, so no launcher
    // stays resident and signals reach the server directly; the flags are
    // computed here, from the policy, unless the script found this very
    // start in its cache with every fact behind it unchanged.
    const fragment = renderExecFragment(start.argv, start.cwd, start.env);
    const bytes = new TextEncoder().encode(fragment);
    for (let done = 0; done < bytes.length;) done += await Deno.stdout.write(bytes.subarray(done));
    if (START_RECORDER !== null && START_CACHE !== null) {
      await recordStart(START_RECORDER, START_CACHE, fragment);
    }
    Deno.exit(0);
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: start.argv,
    cwd: start.cwd,
    env: start.env,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  Deno.exit(await superviseChild(child));
}
