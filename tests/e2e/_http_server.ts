/**
 * Harness for HTTP end-to-end tests that need the server in its own process:
 * `htmcp serve --http` started through the launcher (the generated permission
 * set), optionally under `prlimit` with a small descriptor limit, a policy
 * written to a temp folder, and the checks every such test ends with: each
 * acknowledged call has its attempt record, and `htmcp audit verify` passes.
 */
import { prepareJail } from "../_helpers/jail.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { LAUNCH, readServingUrl } from "../../scripts/conformance.ts";

const DENO = Deno.execPath();

export interface ServerProcess {
  readonly dir: string;
  readonly url: string;
  readonly auditPath: string;
  readonly child: Deno.ChildProcess;
  stderr(): string;
  records(): Promise<Record<string, unknown>[]>;
  /** SIGTERM, wait for the exit, then `htmcp audit verify`; returns the exit status. */
  stop(): Promise<Deno.CommandStatus>;
}

export interface ServerOptions {
  /** Extra lines for the `[http]` table. */
  readonly http?: readonly string[];
  /** Lines for a `[limits]` table. */
  readonly limits?: readonly string[];
  /** Files to create in the jail. */
  readonly files?: Readonly<Record<string, string>>;
  /** `prlimit --nofile=N:N` for the server (launcher and child). */
  readonly nofile?: number;
  readonly allow?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** Whole tables appended to the policy (e.g. `[log]`). */
  readonly extraToml?: string;
}

/** Writes an auth-off loopback policy and starts the CLI server. */
export async function startServer(options: ServerOptions = {}): Promise<ServerProcess> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-e2e-http-" });
  await Deno.mkdir(join(dir, "jail"));
  const policy = join(dir, "policy.toml");
  await Deno.writeTextFile(
    policy,
    [
      `jail_root = "jail"`,
      `audit_log = "audit.jsonl"`,
      `state_dir = "state"`,
      `[allowlist]`,
      `commands = ${JSON.stringify(options.allow ?? ["echo", "true", "sleep", "head"])}`,
      `[auth]`,
      `mode = "none"`,
      `[limits]`,
      ...(options.limits ?? []),
      `[http]`,
      ...(options.http ?? []),
      options.extraToml ?? "",
      "",
    ].join("\n"),
  );
  for (const [name, text] of Object.entries(options.files ?? {})) {
    await Deno.writeTextFile(join(dir, "jail", name), text);
  }
  // Commands run in the kernel sandbox as the jail's owner: hand the jail to it.
  await prepareJail(join(dir, "jail"));
  const serve = ["run", "-A", LAUNCH, "serve", "--policy", policy, "--http", "127.0.0.1:0"];
  const command = options.nofile === undefined
    ? new Deno.Command(DENO, {
      args: serve,
      env: { ...options.env },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    })
    : new Deno.Command("prlimit", {
      args: [`--nofile=${options.nofile}:${options.nofile}`, DENO, ...serve],
      env: { ...options.env },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    });
  const child = command.spawn();
  const { url, stderr } = await readServingUrl(child);
  const auditPath = join(dir, "audit.jsonl");
  // Only whole lines: read while the server appends, the last one may be
  // half written (a reader may see a write to a file while it is made).
  const records = async () => {
    const text = await Deno.readTextFile(auditPath);
    return text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter((l) => l !== "").map((
      l,
    ) => JSON.parse(l) as Record<string, unknown>);
  };
  let stopped: Promise<Deno.CommandStatus> | null = null;
  return {
    dir,
    url,
    auditPath,
    child,
    stderr,
    records,
    stop() {
      stopped ??= (async () => {
        try {
          child.kill("SIGTERM");
        } catch {
          // already exited
        }
        const status = await child.status;
        await assertAuditVerifies(auditPath);
        return status;
      })();
      return stopped;
    },
  };
}

/** `htmcp audit verify FILE` through the launcher must exit 0. */
export async function assertAuditVerifies(auditPath: string): Promise<void> {
  const verified = await new Deno.Command(DENO, {
    args: ["run", "-A", LAUNCH, "audit", "verify", auditPath],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(verified.stdout) + new TextDecoder().decode(verified.stderr);
  assert.equal(verified.code, 0, `audit verify failed:\n${out}`);
}

/**
 * Every command the client saw answered has an attempt record (matched by
 * its unique command text), and an outcome when it was allowed to run.
 */
export function assertAcknowledgedAudited(
  records: readonly Record<string, unknown>[],
  acknowledged: readonly string[],
): void {
  for (const command of acknowledged) {
    const attempt = records.find((r) => r.kind === "attempt" && r.command_raw === command);
    assert.ok(attempt !== undefined, `no attempt record for acknowledged call "${command}"`);
    if (attempt.verdict === "allow") {
      assert.ok(
        records.some((r) => r.kind === "outcome" && r.call_id === attempt.call_id),
        `no outcome record for acknowledged call "${command}"`,
      );
    }
  }
}

/** Removes the temp folder of a stopped server. */
export async function cleanUp(server: ServerProcess): Promise<void> {
  await server.stop();
  await Deno.remove(server.dir, { recursive: true });
}
