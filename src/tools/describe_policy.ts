/**
 * `describe_policy`: what a model needs to choose commands well, and nothing
 * an attacker could use: no secrets, no environment values, no audit path, and
 * the jail's real path only when the operator opts in (`show_jail_path`).
 *
 * @module
 */
import * as z from "zod";
import type { Policy } from "../config/types.ts";
import type { ExecutorDescription } from "../exec/mod.ts";
import { activeGuardSummaries } from "../policy/mod.ts";
import { pathCheckOnlyNotice } from "../sandbox/mod.ts";
import { FULL_CONTROL_NOTICE } from "../full_control/mod.ts";

export const DESCRIBE_POLICY_DESCRIPTION =
  "Describe what this server lets you run: allowed commands, argument rules, the " +
  "working-directory jail, limits, and how commands are parsed. Call this first.";

/** Marker shown instead of the jail's path when the operator hides it. */
export const JAIL_MARKER = "<jail>";

export const POLICY_DESCRIPTION_SHAPE = {
  allowed_commands: z.array(z.string()),
  denied_commands: z.array(z.string()),
  argument_rules: z.array(z.object({ command: z.string(), rule: z.string() })),
  guards: z.array(z.object({ name: z.string(), rule: z.string() })),
  jail_root: z.string(),
  cwd_rule: z.string(),
  path_arguments: z.string(),
  parsing: z.string(),
  limits: z.object({
    timeout_ms: z.number(),
    max_output_bytes: z.number(),
    max_concurrent: z.number(),
    /** How long a call beyond max_concurrent waits for a slot before BUSY. */
    queue_wait_ms: z.number(),
    max_timeout_ms: z.number().describe("The largest timeout_ms run_command accepts."),
    foreground_ms: z.number().describe(
      "A call still running after this long is answered as a job (job_status waits for it).",
    ),
  }),
  sandbox: z.string(),
  /** `[mode] full_control`: command text runs as `bash -c TEXT` in the sandbox. */
  full_control: z.boolean(),
  /** The identity of the policy in force: `sha256:` and 64 hex digits (see `htmcp policy test`). */
  policy_hash: z.string(),
};

export type PolicyDescription = {
  [K in keyof typeof POLICY_DESCRIPTION_SHAPE]: z.infer<(typeof POLICY_DESCRIPTION_SHAPE)[K]>;
};

/** What `describe_policy` reports about the sandbox: the executor's own state. */
export type SandboxInForce = Pick<ExecutorDescription, "mode" | "requestedMode" | "commandUid">;

/**
 * Builds the description once per server, from the frozen policy and the
 * sandbox actually in force (the executor's probes decided it, never the
 * configured text alone, so this can never claim a sandbox that is not there).
 *
 * @param policy The loaded policy.
 * @param sandbox `executor.describe()`.
 * @param hash The policy's identity (`policyHash`), the same one every audit record carries.
 */
export function describePolicy(
  policy: Policy,
  sandbox: SandboxInForce,
  hash: string,
): PolicyDescription {
  const jail = policy.showJailPath ? policy.jailRoot : JAIL_MARKER;
  return {
    allowed_commands: [...policy.allowlist.keys()].filter((name) => !policy.denylist.has(name))
      .sort(),
    denied_commands: [...policy.denylist].sort(),
    argument_rules: policy.rules.map((rule) => ({
      command: rule.command,
      // A prompt rule is described as what it is, so the model expects the
      // wait (and APPROVAL_PENDING) instead of retrying a "refusal".
      rule: rule.everyRun === true && rule.decision === "prompt"
        ? `Held for a human's approval on every run: ${rule.justification ?? rule.reason}`
        : rule.decision === "prompt"
        ? `Held for a human's approval when the arguments contain ${
          rule.denyArgs.map((a) => `"${a}"`).join(" or ")
        }: ${rule.justification ?? rule.reason}`
        : `Refused when the arguments contain ${
          rule.denyArgs.map((a) => `"${a}"`).join(" or ")
        }: ${rule.reason}`,
    })),
    guards: activeGuardSummaries(policy),
    jail_root: jail,
    cwd_rule:
      `Commands run in ${jail} or a folder below it; cwd may be relative to ${jail}. Symlinks are followed before the check.`,
    path_arguments: policy.fullControl !== undefined
      ? `Shell text: paths are not checked by the policy; the sandbox shows only ${jail} (writable), read-only system folders and a private /tmp. argv input: ${
        policy.confineArgs ? `path arguments must resolve inside ${jail}` : "paths are not checked"
      }.`
      : policy.confineArgs
      ? `Every argument that names a path (absolute, with "/", "..", "~", or an existing entry) must resolve inside ${jail}.`
      : "Path arguments are not checked by the policy.",
    parsing: policy.fullControl !== undefined ? FULL_CONTROL_NOTICE : (
      "No shell: the command is split into words with POSIX quoting and nothing is expanded. " +
      "Pipes, redirections, ;, &, $, backticks, globs in the command name and env assignments are refused."
    ),
    limits: {
      timeout_ms: policy.limits.timeoutMs,
      max_output_bytes: policy.limits.maxOutputBytes,
      max_concurrent: policy.limits.maxConcurrent,
      queue_wait_ms: policy.limits.queueWaitMs,
      max_timeout_ms: policy.limits.maxTimeoutMs,
      foreground_ms: policy.limits.foregroundMs,
    },
    sandbox: describeSandbox(policy, sandbox),
    full_control: policy.fullControl !== undefined,
    policy_hash: hash,
  };
}

/** One sentence for the model; the text of mode none is the shared notice. */
export function describeSandbox(policy: Policy, sandbox: SandboxInForce): string {
  if (sandbox.mode === "none") return pathCheckOnlyNotice(sandbox.commandUid);
  return `Commands run in a kernel sandbox (bubblewrap) as an unprivileged user: only the jail is writable, system folders are read-only, /tmp is private and empty, ${
    networkSentence(policy)
  }.`;
}

function networkSentence(policy: Policy): string {
  switch (policy.sandbox.network) {
    case "host":
      return "the network is reachable";
    case "none":
      return "there is no network";
    case "allowlist":
      return `the network is reachable only through an HTTP proxy (HTTP_PROXY is set) to ${
        policy.sandbox.networkAllow.map((rule) => rule.text).join(", ")
      }; any other host is refused with a 403 saying why`;
  }
}
