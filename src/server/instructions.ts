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
import type { ServerContext } from "./context.ts";

/** The bound on the instructions' UTF-8 size. */
export const MAX_INSTRUCTIONS_BYTES = 2000;

/** What the instructions say about the sandbox. */
export interface SandboxFacts {
  readonly mode: string;
  readonly commandUid: number;
}

/** The instructions for `context`'s policy. */
export function serverInstructions(context: ServerContext): string {
  return instructionsFor(context.policy, context.executor.describe());
}

/**
 * The instructions for `policy` run under `sandbox`.
 *
 * @example
 * ```ts
 * instructionsFor(policy, { mode: "bwrap", commandUid: 65534 }).length < 2000; // true
 * ```
 */
export function instructionsFor(policy: Policy, sandbox: SandboxFacts): string {
  const limits = policy.limits;
  const jail = policy.showJailPath ? `the jail (${policy.jailRoot})` : "the jail";
  const head =
    `htmcp runs allowlisted commands in ${jail}, without a shell. Call describe_policy first; explain_command tests a command without running it.`;
  const syntax =
    "htmcp parses the command line itself: pipes (a | b), &&, ||, ;, redirections to files in the jail and globs work; variables, $(...), backticks, & and subshells are refused (PARSE_ERROR), and no command is passed to a shell.";
  const paths =
    "The working directory and every path argument must stay inside the jail: .., absolute paths outside it and symlinks that lead out are refused (CWD_ESCAPE, PATH_ESCAPE).";
  const limitText = `Limits per command: ${
    seconds(limits.timeoutMs)
  } s, then it is killed (TIMEOUT); ${
    bytes(limits.maxOutputBytes)
  } of output, the rest cut (OUTPUT_TRUNCATED); ${limits.maxConcurrent} at once (BUSY).`;
  const longRunning = `Long-running work: split it into steps that each end within ${
    seconds(limits.timeoutMs)
  } s; session_start keeps a working directory across calls; cancelling the request kills the command (CANCELLED).`;
  const sandboxText = sandbox.mode === "none"
    ? pathCheckOnlyNotice(sandbox.commandUid)
    : `Commands run in a kernel sandbox (${sandbox.mode})${
      policy.sandbox.network ? "" : " with no network"
    }.`;
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
