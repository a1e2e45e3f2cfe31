/**
 * `htmcp serve --policy FILE [--http HOST:PORT] [--allow-unconfined]`: load
 * and validate the policy, put the Deno permission layer in force (flags,
 * pinned binary, or a self-confined Worker), build the server context (audit
 * log, redactor, executor), then serve stdio or HTTP. Any startup problem ends
 * the process with one sentence on stderr and a non-zero exit, before
 * anything is served.
 *
 * stdout belongs to the MCP protocol in stdio mode, so every human-readable
 * line goes to stderr.
 *
 * @module
 */
import { parseArgs } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import { processEnv } from "./env.ts";
import { watchPolicyFile } from "../server/policy_watch.ts";
import type { LoadOverrides } from "../config/mod.ts";
import { createServerContext } from "../server/context.ts";
import type { ServerContext } from "../context/mod.ts";
import { reopenAuditOnSighup } from "../audit/sighup.ts";
import { firstFailingPolicyTest } from "../policy_tools/run_tests.ts";
import { serveConfined } from "../permissions/confine.ts";
import type { Policy } from "../config/types.ts";
import { VERSION } from "../version.ts";
import { configureOperatorLog, lineSink, operatorLog, queueOperatorLog } from "../telemetry/log.ts";
import { startTelemetry, stopTelemetry } from "../telemetry/sink.ts";

/** How long the exit waits for stderr to take the last operator lines. */
const STDERR_FLUSH_MS = 1_000;

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv, {
    values: ["--policy", "--http"],
    switches: ["--allow-unconfined"],
  });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  if (parsed.args.positionals.length > 0 || parsed.args.rest !== null) {
    console.error(`htmcp: serve takes no positional arguments; see htmcp --help.`);
    return 2;
  }
  const httpFlag = parsed.args.values.get("--http");
  // --http goes through the loader too, so its checks (auth "none" only on
  // loopback, the listen address's form) apply to the CLI address as well.
  const overrides: LoadOverrides = httpFlag === undefined ? {} : { httpListen: httpFlag };
  const policy = await loadPolicyForCli(parsed.args.values.get("--policy"), overrides);
  if (policy === null) return 1;
  const listen = policy.http.listen;
  // The permission layer's line is the first operator line: in the [log] format too.
  configureOperatorLog(policy.log);
  return await serveConfined(
    {
      policy,
      allowUnconfined: parsed.args.switches.has("--allow-unconfined"),
      ...(listen === null ? {} : { listen }),
      report: reportPermissionLayer,
    },
    () => serveCore(policy, listen, overrides),
  );
}

/**
 * The permission layer's lines: the layer in force is news, `NONE` (not
 * confined) a warning, and anything else (the set could not be built, the
 * confined Worker failed) an error.
 */
function reportPermissionLayer(line: string): void {
  const text = line.replace(/^htmcp: /, "");
  const log = operatorLog();
  if (/^permission layer: NONE /.test(text)) log.write("warn", "permission_layer", text);
  else if (/^(permission layer|started broader)/.test(text)) {
    log.lifecycle("permission_layer", text);
  } else log.write("error", "permission_layer", text);
}

/**
 * Everything after the permission layer is in force. In the self-confined
 * case this runs inside the Worker, which re-enters the CLI; that is why the
 * warnings are printed here and not before `serveConfined`.
 */
async function serveCore(
  policy: Policy,
  listen: string | null,
  overrides: LoadOverrides,
): Promise<number> {
  // From here on every operator line goes through the [log] settings, and
  // to stderr through a bounded queue: a client that never reads the
  // server's stderr fills the pipe, and a blocking write would freeze the
  // server (calls, audit, timers). The queue is flushed before the exit,
  // within a bound, so a start that fails still says why.
  const lines = queueOperatorLog(policy.log);
  try {
    return await serveQueued(policy, listen, overrides);
  } finally {
    await lines.flush(STDERR_FLUSH_MS);
  }
}

async function serveQueued(
  policy: Policy,
  listen: string | null,
  overrides: LoadOverrides,
): Promise<number> {
  // The stdio transport's modules (the MCP SDK, the tools) load while the
  // context is built: the executor's probes are child processes, and the
  // main thread would otherwise sit idle waiting for them. Loading only
  // defines things; nothing is served before the context exists, and a start
  // that fails first drops the import.
  const stdio = listen === null ? import("../transport/stdio.ts") : null;
  stdio?.catch(() => {});
  const log = operatorLog();
  for (const warning of policy.warnings) log.write("warn", "policy_warning", warning);
  // The policy's own [[tests]] gate the start: a policy that no longer gives
  // the verdicts its author wrote down must not serve anyone.
  const failing = await firstFailingPolicyTest(policy);
  if (failing !== null) {
    log.write(
      "error",
      "server_start_failed",
      `${failing}; the server does not start until the policy passes its tests.`,
    );
    return 1;
  }
  const built = await createServerContext(policy);
  if (!built.ok) {
    log.write("error", "server_start_failed", built.message);
    return 1;
  }
  const context = built.context;
  // Off without [telemetry]: then nothing of the SDK is even loaded.
  await startTelemetry(policy.telemetry, { running: () => context.limiter.running });
  // From the moment the log is open, in every serve mode, SIGHUP reopens it
  // (logrotate's postrotate sends it) and never ends the server.
  const stopReopening = reopenAuditOnSighup(context, lineSink("audit_reopen"));
  // The frozen policy keeps judging; an edit of its file is only reported.
  const stopWatching = policy.policyFile === null ? async () => {} : watchPolicyFile(
    policy.policyFile,
    context,
    { env: processEnv(), overrides },
    lineSink("policy_changed", "warn"),
  );
  try {
    return await serveOpened(policy, listen, context, stdio);
  } finally {
    await stopWatching();
    stopReopening();
    // After the context closed: every call's span and metrics are recorded.
    await stopTelemetry();
  }
}

async function serveOpened(
  policy: Policy,
  listen: string | null,
  context: ServerContext,
  stdio: Promise<typeof import("../transport/stdio.ts")> | null,
): Promise<number> {
  // The mode in force and who commands run as; in mode none this is the
  // loud warning that the jail is advisory.
  const sandbox = context.executor.describe();
  operatorLog().lifecycle("sandbox", `sandbox: ${sandbox.summary}`, { mode: sandbox.mode });
  // In the log, chained, before anything is served; its fdatasync is the
  // first attempt's (before anything runs) or the log's timer: the handshake
  // does not wait for the disk.
  await context.audit.writeEvent("server_start", {
    version: VERSION,
    transport: listen === null ? "stdio" : "http",
    pid: Deno.pid,
    policy_file: policy.policyFile,
    fail_mode: policy.auditFailMode,
  }, "written");
  if (listen !== null) {
    const { serveHttpUntilStopped } = await import("../transport/http/mod.ts");
    return await serveHttpUntilStopped(context, listen);
  }
  const { serveStdio } = await (stdio ?? import("../transport/stdio.ts"));
  const reason = await serveStdio(context);
  // serveStdio closed the context; this last line is for the operator only.
  operatorLog().lifecycle("server_stopped", `stopped (${reason}).`, { reason });
  return 0;
}
