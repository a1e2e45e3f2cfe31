/**
 * Policies for the policy-engine tests. Commands installed on this machine
 * are resolved for real by `makePolicy`; the few guarded tools that are not
 * installed (rg, sudo, doas...) get a plain entry, which is enough because a
 * bare command name is decided without touching the filesystem.
 */
import type { Policy, ResolvedCommand } from "../../src/config/types.ts";
import { DEFAULT_CHILD_PATH } from "../../src/config/types.ts";
import { makePolicy, resolveOnPath } from "../_helpers/policy.ts";

/** One jail folder per test module; evaluateCommand never reads it. */
export const POLICY_JAIL: string = Deno.makeTempDirSync({ prefix: "htmcp-policy-" });
globalThis.addEventListener("unload", () => {
  Deno.removeSync(POLICY_JAIL, { recursive: true });
});

function isInstalled(name: string): boolean {
  return DEFAULT_CHILD_PATH.split(":").some((dir) => {
    try {
      return Deno.statSync(`${dir}/${name}`).isFile;
    } catch {
      return false;
    }
  });
}

/** The command as the loader would resolve it, or a plain entry when it is not installed. */
export function commandFor(name: string): ResolvedCommand {
  if (isInstalled(name)) return resolveOnPath(name);
  return { name, path: `/usr/bin/${name}`, realPath: `/usr/bin/${name}` };
}

/** A policy allowing `allow` (installed or not), with optional overrides. */
export function policyAllowing(
  allow: readonly string[],
  overrides: Partial<Policy> = {},
  deny?: readonly string[],
): Policy {
  const base = makePolicy({
    jailRoot: POLICY_JAIL,
    allow: [],
    ...(deny === undefined ? {} : { deny }),
    overrides,
  });
  const allowlist = new Map(allow.map((name) => [name, commandFor(name)]));
  return Object.freeze({ ...base, allowlist });
}

/** The default test policy: everyday tools plus every tool a guard covers. */
export const WIDE_ALLOW: readonly string[] = [
  "ls",
  "cat",
  "echo",
  "true",
  "grep",
  "git",
  "find",
  "sort",
  "tar",
  "sed",
  "awk",
  "mawk",
  "gawk",
  "zip",
  "man",
  "rg",
  "split",
  "rsync",
  "head",
  "wc",
  "du",
  "diff3",
  "sdiff",
];
