/**
 * One call of the serving helper that runs nothing of a caller's: the helper
 * forked with `args` (`--dump`, `--inner -- getent`, `--list-beneath`), in
 * `/` with an empty environment, its output collected under a bound and its
 * run under a deadline. The startup probes and the folder listing of the
 * path checks use it.
 *
 * @module
 */
import { after } from "../timers/mod.ts";
import type { ServingHelper } from "./serving_helper.ts";

/** What the call printed, and how it ended. */
export interface HelperCallOutput {
  readonly status: Deno.CommandStatus;
  readonly stdout: Uint8Array;
  readonly stderr: string;
  /** True when the call printed more than `maxBytes` (the rest was dropped). */
  readonly truncated: boolean;
}

/** How much output is kept and how long the call may take. */
export interface HelperCallLimits {
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

function joined(parts: readonly Uint8Array[]): Uint8Array {
  const total = parts.reduce((sum, part) => sum + part.byteLength, 0);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  return bytes;
}

/**
 * Runs the helper with `args` as a call of the serving helper and collects
 * what it prints. The first call spawns the serving helper itself.
 *
 * @throws As `ServingHelper.start` does when the helper cannot be spawned.
 */
export async function callHelper(
  helper: ServingHelper,
  args: readonly string[],
  limits: HelperCallLimits,
): Promise<HelperCallOutput> {
  const kept = { stdout: [] as Uint8Array[], stderr: [] as Uint8Array[] };
  let size = 0;
  let truncated = false;
  const call = helper.start("/", {}, args, "null", {
    output(stream, bytes) {
      if (size + bytes.byteLength > limits.maxBytes) {
        truncated = true;
        return;
      }
      size += bytes.byteLength;
      kept[stream].push(bytes.slice());
    },
  });
  // The timer also keeps the event loop alive while the call runs (the idle
  // serving helper does not).
  const timer = after(limits.timeoutMs, () => call.kill("SIGKILL"));
  const [status] = await Promise.all([call.status, call.drained]).finally(() => timer.cancel());
  return {
    status,
    stdout: joined(kept.stdout),
    stderr: new TextDecoder().decode(joined(kept.stderr)),
    truncated,
  };
}
