/**
 * `htmcp approvals ...` as the operator would run it (`deno task htmcp`): in
 * its own process, through the launcher, under the policy's generated
 * flags. Shared by the approval suites.
 */
import assert from "node:assert/strict";
import type { Policy } from "../../src/config/types.ts";
import { type Harness, LAUNCH, serverEnv } from "../_helpers/stdio_harness.ts";
import { harnessPolicy, inKernelSandbox } from "../transport/http/_harness.ts";

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `htmcp approvals ARGS --policy <the harness's policy>` as user `operator-test`. */
export function approvals(h: Harness, ...args: string[]): Promise<CliRun> {
  return htmcp(["approvals", ...args, "--policy", h.policyPath], {
    ...serverEnv(h.dir),
    USER: "operator-test",
  });
}

/** `htmcp audit verify` of the harness's log, through the launcher; returns the run. */
export function verifyAudit(h: Harness): Promise<CliRun> {
  return htmcp(["audit", "verify", h.auditLog], serverEnv(h.dir));
}

/** `htmcp ARGS` through the launcher, with exactly `env`. */
async function htmcp(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", LAUNCH, ...args],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/**
 * An HTTP test policy over `dir/jail` in the kernel sandbox, where
 * `touch canary.txt` is held by a prompt rule (the canary exists only if the
 * held command ran) and an out-of-band wait is short.
 */
export function promptedTouchPolicy(dir: string): Policy {
  return {
    ...inKernelSandbox(harnessPolicy(dir, { allow: ["touch"] })),
    rules: [{
      command: "touch",
      denyArgs: ["canary.txt"],
      reason: "a risky command",
      enforce: "deny",
      decision: "prompt",
      justification: "a risky command",
    }],
    approval: { ttlMs: 60_000, waitMs: 300, require: "any" },
  };
}

/** The approvals as `htmcp approvals list --json` shows them. */
export async function listed(
  h: Harness,
): Promise<{ id: string; state: string; answered_by: string | null; job_id?: string }[]> {
  const run = await approvals(h, "list", "--json");
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout);
}

/** Waits (bounded) until a pending approval is listed, and returns its id. */
export async function pendingId(h: Harness, not: readonly string[] = []): Promise<string> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const found = (await listed(h)).find((r) => r.state === "pending" && !not.includes(r.id));
    if (found !== undefined) return found.id;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("no pending approval appeared");
}
