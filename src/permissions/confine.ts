/**
 * `serveConfined`: makes sure the server core runs under the policy's
 * permission set, whatever the process was started with, and says on one
 * stderr line which layer is in force:
 *
 * - `pinned`: a compiled binary whose baked-in flags are no broader than the set;
 * - `flags`: `deno run` with flags no broader than the set (the task launcher);
 * - `self-confined`: the process was broader (a release binary), so the core
 *   runs in a Worker created with exactly the set, and the main thread
 *   revokes every grant it holds once the Worker has loaded; a broader plain
 *   `deno run` (`-A` on the source or the bundle) instead starts itself again
 *   as a child under the flags (`reexec.ts`), whose line then says `flags`;
 * - `NONE`: broader and not confined; only with `allowUnconfined`.
 *
 * The Worker is this program's own main module started again
 * (`Deno.mainModule`), so one file serves every form (source, bundle,
 * compiled binary). It owns stdin/stdout itself (verified: stdio and signal
 * listeners work inside a Worker), so no bytes are bridged per call.
 * Creating a Worker with `deno.permissions` needs `--unstable-worker-options`
 * (still on Deno 2.9.6); without it Deno ends the process (exit 70) with its
 * own message, which fails closed.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { buildPermissionSet } from "./build.ts";
import { comparePermissions } from "./effective.ts";
import { workerPermissions } from "./render_worker.ts";
import { reexecArgv, runReexec } from "./reexec.ts";
import { renderDenoFlags } from "./render_flags.ts";
import type { PermissionSet } from "./types.ts";

/** The layers the startup line can name. */
export type PermissionLayer = "pinned" | "flags" | "self-confined" | "NONE";

/** The Worker name that marks the confined re-entry of the main module. */
export const CONFINED_WORKER_NAME = "htmcp-confined-core";

const ALL_KINDS = ["read", "write", "net", "env", "run", "sys", "ffi", "import"] as const;

interface WorkerScope {
  name: string;
  postMessage(message: unknown): void;
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
}

type ToWorker = { readonly kind: "confined"; readonly set: PermissionSet };
type FromWorker =
  | { readonly kind: "ready" }
  | { readonly kind: "exit"; readonly code: number }
  | { readonly kind: "refused"; readonly message: string };

function workerScope(): WorkerScope | null {
  const global = globalThis as { WorkerGlobalScope?: unknown; name?: unknown };
  return global.WorkerGlobalScope !== undefined ? globalThis as unknown as WorkerScope : null;
}

/** True inside the Worker that `serveConfined` started. */
export function isConfinedWorker(): boolean {
  return workerScope()?.name === CONFINED_WORKER_NAME;
}

/** The start cache the installed command started this server from, or null. */
function startCache(): string | null {
  return grantedVariable("HTMCP_START_CACHED") || null;
}

/** A variable's value; "" when unset or outside the env grant (a start from elsewhere). */
function grantedVariable(name: string): string {
  try {
    return Deno.env.get(name) ?? "";
  } catch {
    return "";
  }
}

/** Deno's permission flags, one a line, as the installed script lists the ones it started us with. */
function permissionFlags(argv: readonly string[]): string {
  return argv.filter((arg) => /^--(allow|deny)-/.test(arg)).map((arg) => `${arg}\n`).join("");
}

/** Why a cached start's flags are not `set`'s, or null when they are exactly its flags. */
function cachedFlagsDiffer(
  set: PermissionSet,
  broader: readonly string[],
  missing: readonly string[],
): string | null {
  if (broader.length > 0) return `broader: ${summarize(broader)}`;
  if (missing.length > 0) return `missing: ${summarize(missing)}`;
  const started = grantedVariable("HTMCP_START_FLAGS");
  const expected = permissionFlags(renderDenoFlags(set));
  if (started === expected) return null;
  const startedLines = new Set(started.split("\n").filter(Boolean));
  const expectedLines = new Set(expected.split("\n").filter(Boolean));
  const only = (a: Set<string>, b: Set<string>) => [...a].filter((line) => !b.has(line));
  return [
    ...only(startedLines, expectedLines).map((flag) => `started with ${flag}`),
    ...only(expectedLines, startedLines).map((flag) => `the set has ${flag}`),
  ].join("; ") || "the flags differ in order";
}

/** A short list: the unscoped kinds when any, else the first few descriptors. */
function summarize(broader: readonly string[]): string {
  const unscoped = broader.filter((entry) => entry.endsWith("(unscoped)"));
  const shown = unscoped.length > 0 ? unscoped : broader.slice(0, 5);
  const more = broader.length - shown.length;
  return shown.join(", ") + (more > 0 ? ` and ${more} more` : "");
}

/** The one startup line. */
export function layerLine(layer: PermissionLayer, detail: string): string {
  return `htmcp: permission layer: ${layer} (${detail})`;
}

/** What `serveConfined` confines, and how it reports. */
export interface ServeConfinedOptions {
  /** The loaded policy; the set is derived from it (on the main thread only). */
  readonly policy: Policy;
  /** `--http HOST:PORT`, when given. */
  readonly listen?: string | null;
  /** Run the core even when the layer cannot be put in force (prints `NONE`). */
  readonly allowUnconfined?: boolean;
  /** Where the startup line goes (default: stderr). */
  readonly report?: (line: string) => void;
}

/**
 * Runs `core` under the policy's permission set, here or in a confined Worker.
 *
 * Call it after loading the policy and before opening anything (audit log,
 * executor, sockets): in the self-confined case the main thread only waits.
 *
 * @param options The set, and whether `NONE` is acceptable.
 * @param core Builds the server context and serves; resolves to the exit code.
 * @returns The exit code of the core, wherever it ran; 1 when it could not be confined.
 * @example
 * ```ts
 * import { layerLine, serveConfined } from "./mod.ts";
 * import type { Policy } from "../config/types.ts";
 * declare const policy: Policy;
 * declare function serve(policy: Policy): Promise<number>; // opens the audit log, serves
 * const code = await serveConfined({ policy, listen: "127.0.0.1:8080" }, async (layer) => {
 *   console.error(layerLine(layer, "serving"));
 *   return await serve(policy);
 * });
 * Deno.exit(code);
 * ```
 */
export async function serveConfined(
  options: ServeConfinedOptions,
  core: (layer: PermissionLayer) => Promise<number>,
): Promise<number> {
  const report = options.report ?? ((line: string) => console.error(line));
  const scope = workerScope();
  if (scope !== null && scope.name === CONFINED_WORKER_NAME) {
    return await runInConfinedWorker(scope, core);
  }
  const built = await buildPermissionSet(
    options.policy,
    options.listen === undefined ? {} : { listen: options.listen },
  );
  if (!built.ok) {
    report(`htmcp: ${built.reason}`);
    return 1;
  }
  const set = built.set;
  const { broader, missing } = comparePermissions(set);
  // The installed command reused a start its launcher printed earlier
  // (scripts/_start_cache.ts): its facts were checked unchanged, but a fact
  // may change between that check and this line, and the policy's set now is
  // what counts. The script passes the permission flags it actually started
  // this process with; they must be exactly the set's, or nothing opens (the
  // next start sees the change and runs the launcher).
  const cache = startCache();
  if (cache !== null) {
    const differs = cachedFlagsDiffer(set, broader, missing);
    if (differs !== null) {
      report(
        `htmcp: the cached start's permission flags are not the policy's set now (${differs}); start again: a fact behind it changed, so the launcher recomputes it (should this recur, remove ${cache}).`,
      );
      return 1;
    }
  }
  const gaps = missing.length === 0 ? "" : `; not granted, will fail: ${missing.join(", ")}`;
  if (broader.length === 0) {
    const layer = Deno.build.standalone ? "pinned" : "flags";
    report(layerLine(layer, `no broader than the policy's set${gaps}`));
    return await core(layer);
  }
  if (options.allowUnconfined === true) {
    report(layerLine("NONE", `--allow-unconfined; broader than the policy: ${summarize(broader)}`));
    return await core("NONE");
  }
  // A plain `deno run` starts itself again under the flags; only a compiled
  // binary (which has the unstable Worker option baked in) uses the Worker.
  const child = reexecArgv(set, Deno.args);
  if (child !== null) {
    report(
      "htmcp: started broader than the policy's set; starting again under exactly its flags",
    );
    return await runReexec(child);
  }
  return await confineInWorker(set, report);
}

/** The Worker side: say "ready", wait for the parent to drop its grants, serve, report the code. */
async function runInConfinedWorker(
  scope: WorkerScope,
  core: (layer: PermissionLayer) => Promise<number>,
): Promise<number> {
  const confined = new Promise<PermissionSet>((resolve) => {
    scope.addEventListener("message", (event: MessageEvent<ToWorker>) => {
      if (event.data?.kind === "confined") resolve(event.data.set);
    });
  });
  // Deno.exit() inside a Worker ends only the Worker, silently: pass the code
  // on first, so the process exits with it.
  const exit = Deno.exit;
  Object.defineProperty(Deno, "exit", {
    value: (code?: number): never => {
      scope.postMessage({ kind: "exit", code: code ?? 0 } satisfies FromWorker);
      return exit(code);
    },
  });
  scope.postMessage({ kind: "ready" } satisfies FromWorker);
  const set = await confined;
  const { broader } = comparePermissions(set);
  if (broader.length > 0) {
    const message = `the confined Worker is broader than the policy: ${summarize(broader)}`;
    scope.postMessage({ kind: "refused", message } satisfies FromWorker);
    return 1;
  }
  const code = await core("self-confined");
  scope.postMessage({ kind: "exit", code } satisfies FromWorker);
  return code;
}

/** The main-thread side: start the Worker, drop every grant once it loaded, wait for its code. */
function confineInWorker(set: PermissionSet, report: (line: string) => void): Promise<number> {
  return new Promise<number>((resolve) => {
    const worker = new Worker(Deno.mainModule, {
      type: "module",
      name: CONFINED_WORKER_NAME,
      deno: { permissions: workerPermissions(set) },
    } as WorkerOptions);
    const finish = (code: number) => {
      worker.terminate();
      resolve(code);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      report(`htmcp: the confined server stopped on an internal error: ${event.message}`);
      finish(1);
    };
    worker.onmessage = async (event: MessageEvent<FromWorker>) => {
      const message = event.data;
      if (message.kind === "ready") {
        // Only now: the Worker's module graph loads under the parent's grants.
        for (const name of ALL_KINDS) {
          await Deno.permissions.revoke({ name } as Deno.PermissionDescriptor);
        }
        report(
          layerLine(
            "self-confined",
            "started broader; the server runs in a Worker with exactly the policy's set",
          ),
        );
        worker.postMessage({ kind: "confined", set } satisfies ToWorker);
      } else if (message.kind === "refused") {
        report(layerLine("NONE", message.message));
        finish(1);
      } else {
        finish(message.code);
      }
    };
  });
}
