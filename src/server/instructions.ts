/**
 * The server instructions clients show the model (`initialize` and
 * `server/discover`), generated from the policy: what may run, that there is
 * no shell and which syntax is refused, how paths are confined, the limits,
 * and how to ask for long-running work.
 *
 * Bounded: some clients (Claude Code) cut instructions at 2 KB, so the text
 * stays under {@linkcode MAX_INSTRUCTIONS_BYTES} whatever the policy; a long
 * allowlist is shortened and `describe_policy` named for the rest. It holds
 * nothing secret: no environment values, no redaction patterns, no audit or
 * state paths, and the jail's real path only when `[describe] show_jail_path`
 * says so.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { pathCheckOnlyNotice } from "../sandbox/mod.ts";
import { FULL_CONTROL_NOTICE } from "../full_control/mod.ts";
import type { ServerContext } from "../context/mod.ts";

/** The bound on the instructions' UTF-8 size. */
export const MAX_INSTRUCTIONS_BYTES = 2000;

/** What the instructions say about the sandbox. */
export interface SandboxFacts {
  readonly mode: string;
  readonly commandUid: number;
}

const PARSED_SYNTAX =
  "htmcp parses the command line itself: pipes (a | b), &&, ||, ;, redirections to files in the jail and globs work; variables, $(...), backticks, & and subshells are refused (PARSE_ERROR), and no command is passed to a shell.";

const NETWORK_TEXT: Readonly<Record<Policy["sandbox"]["network"], string>> = {
  none: " with no network",
  allowlist: " whose only network is a proxy to the hosts the policy lists",
  host: " with the host's network",
};

/** The instructions for `context`'s policy. */
export function serverInstructions(context: ServerContext): string {
  return instructionsFor(context.policy, context.executor.describe());
}

/**
 * The instructions for `policy` run under `sandbox`.
 *
 * @example Whatever the policy, the text fits the bound
 * ```ts
 * import { loadPolicy } from "../config/mod.ts";
 * import { instructionsFor, MAX_INSTRUCTIONS_BYTES } from "./instructions.ts";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/jail`);
 * await Deno.writeTextFile(`${dir}/policy.toml`, 'jail_root = "jail"\n');
 * const loaded = await loadPolicy({ policyFile: `${dir}/policy.toml`, env: {} });
 * if (!loaded.ok) throw new Error(loaded.message);
 * const text = instructionsFor(loaded.policy, { mode: "bwrap", commandUid: 65534 });
 * console.assert(new TextEncoder().encode(text).length <= MAX_INSTRUCTIONS_BYTES);
 * ```
 */
export function instructionsFor(policy: Policy, sandbox: SandboxFacts): string {
  const limits = policy.limits;
  const jail = policy.showJailPath ? `the jail (${policy.jailRoot})` : "the jail";
  const head =
    `htmcp runs allowlisted commands in ${jail}, without a shell. Call describe_policy first; explain_command tests a command without running it.`;
  // Full-control mode changes what command text means: say so instead of the parser's rules.
  const syntax = policy.fullControl !== undefined ? FULL_CONTROL_NOTICE : PARSED_SYNTAX;
  const paths =
    "The working directory and every path argument must stay inside the jail: .., absolute paths outside it and symlinks that lead out are refused (CWD_ESCAPE, PATH_ESCAPE).";
  const limitText = `Limits per command: ${
    seconds(limits.timeoutMs)
  } s, then it is killed (TIMEOUT); ${
    bytes(limits.maxOutputBytes)
  } of output, the rest cut (OUTPUT_TRUNCATED); ${limits.maxConcurrent} at once, more wait up to ${
    seconds(limits.queueWaitMs)
  } s for a slot (then BUSY).`;
  const longRunning = policy.stateDir === null
    ? `Long-running work: split it into steps that each end within ${
      seconds(limits.timeoutMs)
    } s; cancelling the request kills the command (CANCELLED).`
    : `Long-running work: run_command with background: true (and timeout_ms up to ${
      seconds(limits.maxTimeoutMs)
    } s) returns a job_id at once, and a call still running after ${
      seconds(limits.foregroundMs)
    } s becomes a job (JOB_RUNNING); job_status(job_id, wait_ms) waits for it, job_output pages its output, job_cancel kills it. session_start keeps a working directory across calls.`;
  const sandboxText = sandbox.mode === "none"
    ? pathCheckOnlyNotice(sandbox.commandUid)
    : `Commands run in a kernel sandbox (${sandbox.mode})${NETWORK_TEXT[policy.sandbox.network]}.`;
  const denied = policy.denylist.size === 0
    ? ""
    : ` Never allowed: ${[...policy.denylist].sort().join(", ")}.`;
  const fixed = [head, "", syntax, paths, limitText, longRunning, sandboxText + denied];
  const room = MAX_INSTRUCTIONS_BYTES - utf8Length(fixed.join("\n")) - 1;
  fixed[1] = allowedLine([...policy.allowlist.keys()].sort(), room);
  return clip(fixed.join("\n"));
}

/** "Allowed commands: a, b, c (and N more: see describe_policy)." within `room` bytes. */
function allowedLine(names: readonly string[], room: number): string {
  if (names.length === 0) return "No command is allowed by this policy.";
  const full = `Allowed commands: ${names.join(", ")}.`;
  if (utf8Length(full) <= room) return full;
  const shown: string[] = [];
  for (const name of names) {
    const rest = names.length - shown.length - 1;
    const candidate = `Allowed commands: ${
      [...shown, name].join(", ")
    } and ${rest} more (describe_policy lists them).`;
    if (utf8Length(candidate) > room) break;
    shown.push(name);
  }
  return `Allowed commands: ${shown.length === 0 ? "" : `${shown.join(", ")} and `}${
    names.length - shown.length
  } more (describe_policy lists them).`;
}

/** Last resort, should a fixed part ever outgrow the bound: cut at a character. */
function clip(text: string): string {
  if (utf8Length(text) <= MAX_INSTRUCTIONS_BYTES) return text;
  let out = "";
  for (const char of text) {
    if (utf8Length(out + char) > MAX_INSTRUCTIONS_BYTES - 3) break;
    out += char;
  }
  return `${out}...`;
}

function utf8Length(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

function bytes(count: number): string {
  return count >= 1024 * 1024 && count % (1024 * 1024) === 0
    ? `${count / (1024 * 1024)} MiB`
    : count >= 1024 && count % 1024 === 0
    ? `${count / 1024} KiB`
    : `${count} bytes`;
}
