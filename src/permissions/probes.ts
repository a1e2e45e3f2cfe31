/**
 * Live probes for `htmcp check`: operations the permission set must refuse,
 * attempted for real in the confined context. A probe passes only when Deno
 * refuses it with `NotCapable`; anything else (success, NotFound, another
 * error) means the layer did not prove itself, and `check` says so.
 *
 * Targets are chosen outside the set, so a policy that happens to allowlist
 * `id` or jail `/etc` still gets a meaningful probe. The write probe targets
 * the jail, which the server must never write; if it were allowed it would
 * create a canary file, which the probe removes and reports.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { isInside } from "./_paths.ts";
import type { PermissionSet } from "./types.ts";

/** One probe: what was tried and what happened. */
export interface LiveProbe {
  /** What was tried, in words (`read a file outside the read set`). */
  readonly name: string;
  /** The program, path, variable or address tried: one the set must refuse. */
  readonly target: string;
  /** `NotCapable`, `ok`, or another error class name. */
  readonly outcome: string;
  /** True when Deno refused with `NotCapable`. */
  readonly passed: boolean;
}

const UNLISTED_PROGRAMS = ["/usr/bin/id", "/usr/bin/env", "/bin/sh", "/usr/bin/whoami"];
const OUTSIDE_FILES = ["/etc/passwd", "/etc/hostname", "/etc/os-release"];
const UNGRANTED_ENV = ["AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "HTMCP_CHECK_PROBE_UNGRANTED"];

async function outcomeOf(fn: () => unknown | Promise<unknown>): Promise<string> {
  try {
    await fn();
    return "ok";
  } catch (error) {
    return error instanceof Error ? error.name : String(error);
  }
}

/**
 * Runs the probes in the current context.
 *
 * @param set The permission set the context should be under.
 * @param policy The policy (for the jail root).
 * @returns One entry per probe, in a stable order.
 */
export async function runLiveProbes(set: PermissionSet, policy: Policy): Promise<LiveProbe[]> {
  const runGranted = new Set(set.run.map((grant) => grant.value));
  const readGranted = set.read.map((grant) => grant.value);
  const envGranted = new Set(set.env.map((grant) => grant.value));
  const program = UNLISTED_PROGRAMS.find((path) => !runGranted.has(path)) ?? "/usr/bin/id";
  const file = OUTSIDE_FILES.find((path) => !readGranted.some((root) => isInside(root, path))) ??
    "/etc/passwd";
  const variable = UNGRANTED_ENV.find((name) => !envGranted.has(name)) ?? UNGRANTED_ENV[2]!;
  const canary = `${policy.jailRoot}/.htmcp-check-canary`;
  const probes: [string, string, () => unknown][] = [
    [
      "spawn a binary that is not allowlisted",
      program,
      () => new Deno.Command(program, { clearEnv: true, stdout: "null", stderr: "null" }).output(),
    ],
    ["read a file outside the read set", file, () => Deno.readTextFile(file)],
    ["write inside the jail (never the server's)", canary, async () => {
      await Deno.writeTextFile(canary, "");
      await Deno.remove(canary);
    }],
    ["read an env var outside the set", variable, () => Deno.env.get(variable)],
  ];
  if (set.net.length === 0) {
    probes.push([
      "open a socket (stdio has no net)",
      "127.0.0.1:59999",
      () => Deno.connect({ hostname: "127.0.0.1", port: 59999 }).then((conn) => conn.close()),
    ]);
  } else {
    probes.push([
      "listen on another port",
      "127.0.0.1:59999",
      () => Deno.listen({ hostname: "127.0.0.1", port: 59999 }).close(),
    ]);
  }
  const results: LiveProbe[] = [];
  for (const [name, target, fn] of probes) {
    const outcome = await outcomeOf(fn);
    results.push({ name, target, outcome, passed: outcome === "NotCapable" });
  }
  return results;
}
