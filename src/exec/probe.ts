/**
 * Startup probes: run the real launcher chain once, so a server that cannot
 * contain (or sandbox) its commands refuses to start instead of running them
 * uncontained. Each probe returns a value; the executor decides what a
 * failure means for the configured mode.
 *
 * @module
 */
import type { Policy, ResolvedCommand } from "../config/types.ts";
import { createRedactor } from "../redact/mod.ts";
import { type HostLayout, layoutFromLinks, SYSTEM_DIRS, type UserEntry } from "../sandbox/mod.ts";
import { type LaunchPlan, SANDBOX_EGRESS_SOCKET } from "./launcher.ts";
import { runContained } from "./run.ts";
import type { ServingHelper } from "./serving_helper.ts";
import { callHelper } from "./helper_call.ts";
import type { SandboxAhead } from "./sandbox_ahead.ts";
import type { ProbeResult } from "./types.ts";

/** The shell every Linux system has; used only by the probes, never for commands. */
export const PROBE_SHELL = "/bin/sh";

const PROBE_TIMEOUT_MS = 5_000;
/**
 * Redaction off: the probe reads its own output (a pid, marker words) and
 * its stderr's first line as the failure detail, which must reach the
 * operator as written; nothing of a caller's runs through it.
 */
const PROBE_REDACTOR = createRedactor({
  enabled: false,
  entropyFallback: false,
  extraPatterns: [],
});

/** At most this much of a startup call's output is kept (a passwd line, a uid and a few links). */
const STARTUP_OUTPUT_BYTES = 64 * 1024;

/** What a startup call through the serving helper printed, and how it ended. */
interface HelperOutput {
  readonly status: Deno.CommandStatus;
  readonly stdout: string;
  readonly stderr: string;
}

/** A startup call of the serving helper (`callHelper`), its output as text. */
async function runThroughHelper(
  helper: ServingHelper,
  args: readonly string[],
): Promise<HelperOutput> {
  const output = await callHelper(helper, args, {
    maxBytes: STARTUP_OUTPUT_BYTES,
    timeoutMs: PROBE_TIMEOUT_MS,
  });
  return {
    status: output.status,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: output.stderr,
  };
}

/**
 * Reads the server's uid and gid through the launcher helper itself
 * (`htmcp-spawn --dump`, a call of the serving helper: no namespace, just
 * the report), which also proves Deno may spawn it. `Deno.uid()` would need
 * `--allow-sys`. The same answer says which system folders are symlinks
 * into `/usr` (the sandbox recreates those as symlinks, a mount fewer each
 * per call): the server's permissions do not let it read them itself.
 */
export async function probeServerUid(
  helper: ServingHelper,
): Promise<
  { ok: true; uid: number; gid: number | null; layout: HostLayout } | {
    ok: false;
    detail: string;
  }
> {
  const spawn = helper.path;
  try {
    const output = await runThroughHelper(helper, ["--dump", ...SYSTEM_DIRS]);
    const match = /^uid: (\d+)$/m.exec(output.stdout);
    if (!output.status.success || match === null) {
      // A serving helper that could not serve said why on its own stderr.
      const said = output.stderr.split("\n", 1)[0]?.trim() || helper.lastWords;
      return { ok: false, detail: said || `"${spawn} --dump" did not report a uid` };
    }
    const gid = /^gid: (\d+)$/m.exec(output.stdout);
    const links = new Map(
      [...output.stdout.matchAll(/^link: (\S+) (.+)$/gm)].map(([, dir, target]) => [dir!, target!]),
    );
    return {
      ok: true,
      uid: Number(match[1]),
      gid: gid === null ? null : Number(gid[1]),
      layout: layoutFromLinks(links),
    };
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable) {
      return { ok: false, detail: `Deno's permissions do not allow running ${spawn}` };
    }
    if (error instanceof Deno.errors.NotFound) {
      return { ok: false, detail: `${spawn} is missing (run \`deno task build-launcher\`)` };
    }
    return { ok: false, detail: `${spawn} could not be started` };
  }
}

/** The passwd database, read by `getent` (glibc; files, LDAP, sssd alike). */
export const GETENT = "/usr/bin/getent";

/**
 * Looks `key` (a user name or a uid) up in the passwd database. Run through
 * the launcher helper (`htmcp-spawn --inner -- getent passwd KEY`, a call of
 * the serving helper: no namespace, just exec) because the server's own
 * permissions do not, and need not, include reading `/etc/passwd`; the
 * helper is the one program it may spawn.
 *
 * @returns The entry; for a uid without an entry, that uid with gid null;
 *   for a name without one, null.
 */
export async function lookupUser(
  helper: ServingHelper,
  key: string | number,
): Promise<{ ok: true; entry: UserEntry | null } | { ok: false; detail: string }> {
  try {
    const output = await runThroughHelper(helper, ["--inner", "--", GETENT, "passwd", String(key)]);
    // getent exits 2 for "no such entry".
    if (output.status.code === 2) {
      return { ok: true, entry: typeof key === "number" ? { uid: key, gid: null } : null };
    }
    const line = output.stdout.split("\n", 1)[0] ?? "";
    const fields = line.split(":");
    const uid = Number(fields[2]);
    const gid = Number(fields[3]);
    if (
      !output.status.success || fields.length < 4 || !Number.isInteger(uid) ||
      !Number.isInteger(gid)
    ) {
      return { ok: false, detail: `"${GETENT} passwd ${key}" gave no usable entry` };
    }
    return { ok: true, entry: { uid, gid } };
  } catch {
    return { ok: false, detail: `${helper.path} could not run ${GETENT}` };
  }
}

/** Printed by the probe when the command's uid cannot create a file in the jail root. */
const NOT_WRITABLE = "jail-not-writable";

/**
 * Runs `/bin/sh` through `plan` in the jail root, as commands will run, and
 * expects pid 2: the command is the first process under the namespace's
 * init, which proves the PID namespace exists. In bwrap mode it also expects
 * `/etc/shadow` to be absent from the sandbox's view. In every mode it
 * creates and removes a probe file in the jail root, which proves the
 * command's uid can search and write the jail (the real test: permission
 * bits, ACLs, read-only mounts and user-namespace mapping all count).
 * The probe runs through `helper`, the serving helper the executor keeps for
 * every call, so what it proves is the process calls will use.
 */
export async function probePlan(
  name: string,
  plan: LaunchPlan,
  policy: Policy,
  helper: ServingHelper,
  ahead: SandboxAhead,
): Promise<ProbeResult> {
  const shell: ResolvedCommand = { name: "sh", path: PROBE_SHELL, realPath: PROBE_SHELL };
  const shadow = plan.mode === "bwrap"
    ? "if test -e /etc/shadow; then echo shadow-visible; fi; "
    : "";
  // The name comes from the probe, never from the jail: a file of that name
  // planted in advance is at worst truncated and removed.
  // The egress proxy's socket must be bound in: without it the allowlist
  // would leave commands with no network at all, silently.
  const egress = plan.mode === "bwrap" && plan.egressSocket !== undefined
    ? `if ! test -S ${SANDBOX_EGRESS_SOCKET}; then echo egress-socket-missing; fi; `
    : "";
  // `true`, not `:`, opens the file: a failed redirection of a special
  // builtin would end the shell, so `:` needed a subshell (a fork more).
  const script = `echo $$; ${shadow}${egress}` +
    `if true 2>/dev/null > "$1"; then rm -f -- "$1" || echo probe-not-removed; ` +
    `else echo ${NOT_WRITABLE}; fi`;
  const probeFile = `.htmcp-probe-${crypto.randomUUID()}`;
  const probePolicy: Policy = {
    ...policy,
    limits: { ...policy.limits, timeoutMs: PROBE_TIMEOUT_MS, maxOutputBytes: 4096 },
  };
  // Through the executor's own serving helper, as every call goes: the
  // probe proves the path calls take, in the process that will take them.
  const outcome = await runContained(
    {
      plan: { ...plan, backstopMs: PROBE_TIMEOUT_MS + 1_000 },
      policy: probePolicy,
      hardening: null,
      killGraceMs: 1_000,
      helper,
      ahead,
    },
    {
      callId: `probe-${name}`,
      command: shell,
      args: ["-c", script, "sh", probeFile],
      cwd: policy.jailRoot,
      redactor: PROBE_REDACTOR,
    },
    () => () => {},
  );
  if (outcome.code !== "OK" || outcome.exitCode !== 0) {
    const launcher = /could not be set up \((.*)\)\.$/.exec(outcome.reason)?.[1];
    const detail = launcher ?? (firstLine(outcome.stderr) || outcome.reason);
    // "Permission denied" on the jail's path (bwrap binding it or entering
    // it) is the command's uid not reaching the jail; on a tool's, it is not.
    const jailAccess = /Permission denied/.test(detail) && mentionsJail(detail, policy.jailRoot);
    return { name, ok: false, detail, ...(jailAccess ? { jailAccess } : {}) };
  }
  if (outcome.stdout.includes(`${NOT_WRITABLE}\n`)) {
    return {
      name,
      ok: false,
      detail: `the command's uid cannot create a file in the jail root`,
      jailAccess: true,
    };
  }
  if (outcome.stdout !== "2\n") {
    return {
      name,
      ok: false,
      detail: `the probe saw ${
        JSON.stringify(outcome.stdout.trim())
      } instead of pid 2 in a new PID namespace with /etc/shadow hidden${
        egress === "" ? "" : " and the egress socket bound"
      }`,
    };
  }
  return { name, ok: true, detail: `ran in a new PID namespace in ${outcome.durationMs} ms` };
}

/** True when `detail` names the jail root or a folder above it. */
function mentionsJail(detail: string, jailRoot: string): boolean {
  for (let path = jailRoot; path.length > 1; path = path.slice(0, path.lastIndexOf("/"))) {
    if (detail.includes(`${path}:`) || detail.includes(`${path} `) || detail.endsWith(path)) {
      return true;
    }
  }
  return false;
}

function firstLine(text: string): string {
  return (text.split("\n", 1)[0] ?? "").trim();
}
