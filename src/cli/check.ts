/**
 * `htmcp check --policy FILE [--http HOST:PORT] [--allow-unconfined]`: proves
 * the layers before an operator trusts them. It validates the policy, lists
 * where each allowlisted command resolved, prints the permission set, then,
 * inside the same confined context `serve` would use (flags, pinned binary or
 * self-confining Worker), runs live probes that must fail with `NotCapable`
 * and shows the sandbox state from the executor's own startup probes.
 *
 * It also prints the policy's identity (`policy_hash`, the one every audit
 * record carries) and the findings of `htmcp policy lint`, each high finding
 * with its fix. Findings are advice: they never change the exit code, which
 * says only whether the layers are in force.
 *
 * Exit codes: 0 the layer is in force and every probe was refused; 1 it is
 * not (unless `--allow-unconfined`), or the policy, the sandbox or the state
 * store (unreachable, schema not current) cannot start; 2 usage. So `htmcp
 * check` is a readiness command: 0 means a server started now would serve.
 *
 * @module
 */
import { parseArgs } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import { processEnv } from "./env.ts";
import { lintPolicy, policyHash } from "../policy_tools/mod.ts";
import { createExecutor, launcherReadPaths } from "../exec/mod.ts";
import { startSandboxEgress } from "../server/egress.ts";

/** `htmcp check` records nothing: a connection to its proxy is refused. */
const NO_AUDIT = {
  writeEvent: () => Promise.resolve({ ok: false as const, reason: "htmcp check keeps no log" }),
};
import {
  type Grant,
  type PermissionLayer,
  permissionSetFor,
  runLiveProbes,
  serveConfined,
  transportFor,
} from "../permissions/mod.ts";
import { describeFdBudget, fdBudget, readFdLimit } from "../transport/http/mod.ts";
import { checkStateStore } from "./state.ts";

const list = (grants: readonly Grant[]) =>
  grants.length === 0 ? "none" : grants.map((grant) => grant.value).join(", ");

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
    console.error("htmcp: check takes no positional arguments; see htmcp --help.");
    return 2;
  }
  const policy = await loadPolicyForCli(parsed.args.values.get("--policy"));
  if (policy === null) return 1;
  const listen = parsed.args.values.get("--http");
  const allowUnconfined = parsed.args.switches.has("--allow-unconfined");
  const out = (line = "") => console.log(line);

  return await serveConfined(
    { policy, allowUnconfined, ...(listen === undefined ? {} : { listen }) },
    async (layer: PermissionLayer) => {
      out(`Policy: ${policy.policyFile ?? "(from the environment)"} is valid.`);
      for (const warning of policy.warnings) out(`  warning: ${warning}`);
      out(`Policy hash: ${await policyHash(policy)}`);
      const findings = lintPolicy(policy, processEnv().HOME);
      const high = findings.filter((finding) => finding.severity === "high").length;
      out(
        findings.length === 0
          ? "Lint: no findings."
          : `Lint: ${findings.length} finding(s), ${high} high (htmcp policy lint shows every fix):`,
      );
      for (const finding of findings) {
        out(`  ${finding.severity.toUpperCase()} ${finding.id}: ${finding.message}`);
        if (finding.severity === "high") out(`    fix: ${finding.fix}`);
      }
      out(`Jail root: ${policy.jailRoot}`);
      out("Allowlisted commands (resolved once; this path is what runs and what is granted):");
      for (const command of policy.allowlist.values()) {
        const real = command.realPath === command.path ? "" : ` (real file ${command.realPath})`;
        out(`  ${command.name} -> ${command.path}${real}`);
      }

      // Built here, inside the confined context: the probes are the executor's own.
      // With network = "allowlist" every sandbox binds the egress proxy's
      // socket, the probe's too. Nothing runs through it here, so no audit
      // log is needed: a connection would be refused (503).
      const egress = await startSandboxEgress(policy, NO_AUDIT);
      if (!egress.ok) {
        out(`Sandbox: FAIL: ${egress.message}`);
        return 1;
      }
      const built = await createExecutor(
        policy,
        egress.proxy === null ? {} : { egressSocket: egress.proxy.socketPath },
      );
      if (!built.ok) {
        await egress.proxy?.close();
        // The same sentence serve would print: what is wrong and the fix.
        out(`Sandbox: FAIL: ${built.message}`);
        return 1;
      }
      const executor = built.executor;
      try {
        const transport = transportFor(policy, listen);
        const result = permissionSetFor(policy, {
          transport,
          launcherPaths: executor.launcherPaths(),
          launcherReads: launcherReadPaths(),
          ...(listen === undefined ? {} : { listen }),
        });
        if (!result.ok) {
          out(`Permission set: refused: ${result.reason}`);
          return 1;
        }
        const set = result.set;
        out(`Permission set (${transport}):`);
        out(`  read:  ${list(set.read)}`);
        out(`  write: ${list(set.write)}`);
        out(`  run:   ${list(set.run)}`);
        out(`  net:   ${list(set.net)}`);
        out(`  env:   ${list(set.env)}`);
        out(`  never: sys, ffi, import; write denied on ${list(set.denyWrite)}`);
        out(`Layer in force: ${layer}`);
        const fds = fdBudget(
          readFdLimit(),
          policy.http.maxConnections,
          policy.limits.maxConcurrent,
        );
        out(`HTTP: ${describeFdBudget(fds)}`);
        if (fds.warning !== null) out(`  warning: ${fds.warning}`);

        const description = executor.describe();
        out(`Sandbox: ${description.summary}`);
        out(`  chain: ${description.chain.join(" -> ")}`);
        const gid = description.commandGid === null ? "" : ` gid ${description.commandGid}`;
        out(
          `  commands run as uid ${description.commandUid}${gid}, ${description.commandUidSource} (server uid ${description.serverUid})`,
        );
        for (const probe of description.probes) {
          out(`  ${probe.ok ? "ok  " : "FAIL"} ${probe.name}: ${probe.detail}`);
        }

        const probes = await runLiveProbes(set, policy);
        out("Live probes (each must be refused by Deno with NotCapable):");
        for (const probe of probes) {
          out(
            `  ${
              probe.passed ? "PASS" : "FAIL"
            } ${probe.name}: ${probe.target} -> ${probe.outcome}`,
          );
        }
        // The state store as the server would open it: reachable, schema current.
        const state = await checkStateStore(policy);
        out(`State store: ${state.line}`);
        if (!state.ok) {
          out("Result: the state store is not usable; the server would not start.");
          return 1;
        }
        const inForce = layer !== "NONE" && probes.every((probe) => probe.passed);
        if (inForce) {
          out("Result: the Deno permission layer is in force.");
          return 0;
        }
        out("Result: the Deno permission layer is NOT in force.");
        return allowUnconfined ? 0 : 1;
      } finally {
        await executor.shutdown();
        await egress.proxy?.close();
      }
    },
  );
}
