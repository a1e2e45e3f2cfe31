/**
 * Notices a policy file edited under a running server. The server keeps the
 * policy it froze at startup (a half-applied or unreviewed policy must never
 * judge a call, and nothing reachable from MCP may change the policy); what
 * changes is that the operator is told, once per change, on stderr and in the
 * audit log (`policy_changed` with the running and the new identity), that a
 * restart is needed for the edit to take effect.
 *
 * How: a cheap periodic `stat` of the file under the read grant the server
 * already holds on it (no inotify: an editor's write-and-rename replaces the
 * inode a watch is on). Only when size, mtime or inode moved are the bytes
 * read; only when the bytes differ from the last ones seen is the file loaded
 * the way the server loaded it, and its identity compared with the running one.
 * A file that does not load here is reported too (`new_policy_hash` null,
 * with the loader's sentence, and always the bytes' SHA-256): it may be
 * broken, or name what this server's own permissions do not reach (a newly
 * allowlisted program); a restart loads it afresh either way.
 *
 * @module
 */
import { type LoadOptions, type LoadOverrides, loadPolicy } from "../config/mod.ts";
import { every } from "../timers/mod.ts";
import { policyHash } from "../policy_tools/identity.ts";
import type { AuditLog } from "../audit/mod.ts";

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /** The policy file was edited under a running server, which keeps its frozen policy. */
    policy_changed: {
      readonly policy_file: string;
      /** The identity of the policy this server runs (unchanged). */
      readonly old_policy_hash: string;
      /** The identity of the policy now in the file; null when it does not load here. */
      readonly new_policy_hash: string | null;
      /** SHA-256 (hex) of the file's new bytes; null when it cannot be read. */
      readonly new_file_sha256: string | null;
      /** What the server does: it keeps the old policy until restarted. */
      readonly action: "restart_needed";
      /** The loader's sentence when the new file does not load; else "". */
      readonly reason: string;
    };
  }
}

/** How often the file is stat'ed: a stat per second is negligible. */
export const POLICY_WATCH_INTERVAL_MS = 1_000;

/** What the watcher needs of the server (a `ServerContext` is one). */
export interface PolicyWatchTarget {
  /** The identity of the policy the server runs, which an edit is compared with. */
  readonly policyHash: string;
  /** Where each change is recorded (`policy_changed`). */
  readonly audit: AuditLog;
}

interface Seen {
  readonly stamp: string;
  readonly bytesHash: string | null;
}

async function stamp(path: string): Promise<string> {
  try {
    const info = await Deno.stat(path);
    return `${info.ino ?? ""}:${info.size}:${info.mtime?.getTime() ?? ""}:${
      info.ctime?.getTime() ?? ""
    }`;
  } catch (error) {
    return `missing:${error instanceof Error ? error.name : "?"}`;
  }
}

async function bytesHash(path: string): Promise<string | null> {
  try {
    const bytes = await Deno.readFile(path);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  } catch {
    return null;
  }
}

/**
 * Starts watching `policyFile` for the running server `target`.
 *
 * @param policyFile The file the running policy was loaded from.
 * @param target The server's policy identity and audit log.
 * @param load The server's own load inputs: the environment view and the CLI values (e.g. `--http`).
 * @param warn Receives the stderr line (default: stderr).
 * @param intervalMs How often the file is stat'ed (tests shorten it).
 * @returns A function that stops the watch and waits for a check in progress.
 *
 * @example Watch while serving; stop before the context closes
 * ```ts
 * import { loadPolicy } from "../config/mod.ts";
 * import { createServerContext, watchPolicyFile } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/jail`);
 * const policyFile = `${dir}/policy.toml`;
 * await Deno.writeTextFile(policyFile, 'jail_root = "jail"\n');
 * const env = {};
 * const loaded = await loadPolicy({ policyFile, env });
 * if (!loaded.ok) throw new Error(loaded.message);
 * const built = await createServerContext(loaded.policy);
 * if (!built.ok) throw new Error(built.message);
 * const stop = watchPolicyFile(policyFile, built.context, { env, overrides: {} });
 * // ... serve until a stop signal ...
 * await stop();
 * await built.context.close("stopped");
 * ```
 */
export function watchPolicyFile(
  policyFile: string,
  target: PolicyWatchTarget,
  load: { readonly env: LoadOptions["env"]; readonly overrides: LoadOverrides },
  warn: (line: string) => void = (line) => console.error(line),
  intervalMs: number = POLICY_WATCH_INTERVAL_MS,
): () => Promise<void> {
  // Nothing is taken as seen at first: the first check loads the file and
  // compares identities, so an edit between the server's load and this
  // watch is reported too, not adopted as the baseline.
  let seen: Seen = { stamp: "", bytesHash: null };
  /** The identity (or load failure) last reported, so each change is said once. */
  let reported: string = target.policyHash;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  const check = async () => {
    // A check queued before stop() must not write to a log that is closing.
    if (stopped) return;
    const now = await stamp(policyFile);
    if (now === seen.stamp) return;
    const hash = await bytesHash(policyFile);
    const same = hash !== null && hash === seen.bytesHash;
    seen = { stamp: now, bytesHash: hash };
    // Touched, not edited: nothing to judge.
    if (same) return;
    const loaded = await loadPolicy({ policyFile, ...load });
    const newHash = loaded.ok ? await policyHash(loaded.policy) : null;
    const reason = loaded.ok ? "" : loaded.message;
    const key = newHash ?? `unloadable:${hash ?? "unreadable"}`;
    if (key === reported) return;
    reported = key;
    // Edited back to the running policy: nothing to restart for.
    if (newHash === target.policyHash) return;
    warn(
      newHash === null
        ? `htmcp: the policy file "${policyFile}" changed (file sha256 ${hash}) and does not load under this server's permissions (${reason}); this server keeps running ${target.policyHash} until it is restarted, and the restart loads the new file afresh.`
        : `htmcp: the policy file "${policyFile}" changed (now ${newHash}); this server keeps running ${target.policyHash} until it is restarted.`,
    );
    const written = await target.audit.writeEvent("policy_changed", {
      policy_file: policyFile,
      old_policy_hash: target.policyHash,
      new_policy_hash: newHash,
      new_file_sha256: hash,
      action: "restart_needed",
      reason,
    });
    if (!written.ok) warn(`htmcp: warning: policy_changed not audited: ${written.reason}`);
  };

  const tick = () => {
    if (stopped) return;
    // One check at a time: a slow load never overlaps the next tick's.
    running = running.then(check).catch((error) =>
      warn(`htmcp: warning: checking the policy file failed: ${String(error)}`)
    );
  };
  tick();
  // The watch must never keep a server alive that is otherwise done.
  const timer = every(intervalMs, tick, { keepAlive: false });
  return async () => {
    stopped = true;
    timer.cancel();
    await running;
  };
}
