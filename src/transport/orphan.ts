/**
 * Noticing that the process that started the server is gone.
 *
 * Threat: a client that SIGKILLs the launcher but keeps the pipes open. The
 * server's stdin never closes, so without this it would run on as an orphan,
 * holding the audit lock and its port. When the parent dies the kernel
 * reparents the server (to PID 1 or a subreaper), which changes `Deno.ppid`;
 * polling it needs no permission. A server started by PID 1 itself (systemd)
 * has no launcher to lose and is not watched.
 *
 * @module
 */

import { every } from "../timers/mod.ts";

/** How often the parent is checked. */
export const ORPHAN_POLL_MS = 500;

/**
 * Calls `onOrphan` once the parent process changed.
 *
 * @returns A function that stops watching.
 */
export function watchParent(
  onOrphan: (reason: string) => void,
  pollMs: number = ORPHAN_POLL_MS,
): () => void {
  const parent = Deno.ppid;
  if (parent <= 1) return () => {};
  // The watch must not keep a stopping process alive.
  const timer = every(pollMs, () => {
    if (Deno.ppid === parent) return;
    timer.cancel();
    onOrphan(`the parent process ${parent} is gone`);
  }, { keepAlive: false });
  return () => timer.cancel();
}
