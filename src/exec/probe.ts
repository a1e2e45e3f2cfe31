/**
 * Startup probes: run the real launcher chain once, so a server that cannot
 * contain (or sandbox) its commands refuses to start instead of running them
 * uncontained. Each probe returns a value; the executor decides what a
 * failure means for the configured mode.
 *
 * @module
 */
import type { Policy, ResolvedCommand } from "../config/types.ts";
import { SANDBOX_UID } from "../sandbox/mod.ts";
import type { LaunchPlan } from "./launcher.ts";
import { runContained } from "./run.ts";
import type { ProbeResult } from "./types.ts";

/** The shell every Linux system has; used only by the probes, never for commands. */
export const PROBE_SHELL = "/bin/sh";

const PROBE_TIMEOUT_MS = 5_000;

/**
 * Reads the server's uid through the launcher helper itself
 * (`htmcp-spawn --dump`: no namespace, just exec), which also proves Deno may
 * spawn it. `Deno.uid()` would need `--allow-sys`.
 */
export async function probeServerUid(
  spawn: string,
): Promise<{ ok: true; uid: number } | { ok: false; detail: string }> {
  try {
    const output = await new Deno.Command(spawn, {
      args: ["--dump"],
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    const match = /^uid: (\d+)$/m.exec(text);
    if (!output.success || match === null) {
      const said = new TextDecoder().decode(output.stderr).split("\n", 1)[0]?.trim();
      return { ok: false, detail: said || `"${spawn} --dump" did not report a uid` };
    }
    return { ok: true, uid: Number(match[1]) };
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

/**
 * Runs `/bin/sh -c 'echo $$'` through `plan` in the jail root and expects pid
 * 2: the command is the first process under the namespace's init, which
 * proves the PID namespace exists. In bwrap mode it also expects
 * `/etc/shadow` to be absent from the sandbox's view.
 */
export async function probePlan(
  name: string,
  plan: LaunchPlan,
  policy: Policy,
): Promise<ProbeResult> {
  const shell: ResolvedCommand = { name: "sh", path: PROBE_SHELL, realPath: PROBE_SHELL };
  const script = plan.mode === "bwrap"
    ? "echo $$; if test -e /etc/shadow; then echo shadow-visible; fi"
    : "echo $$";
  const probePolicy: Policy = {
    ...policy,
    limits: { ...policy.limits, timeoutMs: PROBE_TIMEOUT_MS, maxOutputBytes: 4096 },
  };
  const outcome = await runContained(
    {
      plan: { ...plan, backstopMs: PROBE_TIMEOUT_MS + 1_000 },
      policy: probePolicy,
      hardening: null,
      killGraceMs: 1_000,
    },
    {
      callId: `probe-${name}`,
      command: shell,
      args: ["-c", script],
      cwd: policy.jailRoot,
      redact: (t) => t,
    },
    () => () => {},
  );
  if (outcome.code !== "OK" || outcome.exitCode !== 0) {
    const launcher = /could not be set up \((.*)\)\.$/.exec(outcome.reason)?.[1];
    let detail = launcher ?? (firstLine(outcome.stderr) || outcome.reason);
    if (plan.mode === "bwrap" && plan.serverIsRoot && /Permission denied/.test(detail)) {
      detail += `; sandboxed commands run as uid ${SANDBOX_UID}, so the jail root must be ` +
        `searchable (and, for writes, writable) by that uid`;
    }
    return { name, ok: false, detail };
  }
  if (outcome.stdout !== "2\n") {
    return {
      name,
      ok: false,
      detail: `the probe saw ${
        JSON.stringify(outcome.stdout.trim())
      } instead of pid 2 in a new PID namespace with /etc/shadow hidden`,
    };
  }
  return { name, ok: true, detail: `ran in a new PID namespace in ${outcome.durationMs} ms` };
}

function firstLine(text: string): string {
  return (text.split("\n", 1)[0] ?? "").trim();
}
