/**
 * `[sandbox]`: the kernel sandbox is the default, and running without it is
 * an explicit, loudly named choice.
 *
 * Fails closed: `mode = "none"` without `accept_path_check_only = true` does
 * not load, because without the mount namespace the jail is only as strong as
 * our path checks (layer 1), and those can be raced and out-composed by the
 * tools they check. A policy that says so out loud gets a startup warning;
 * the executor then repeats it wherever the mode is reported.
 *
 * No environment variable overrides these keys: the environment overrides
 * only where files live and the audit fail mode, never a boundary.
 *
 * @module
 */
import { type Checked, fail, pass, quote } from "./_checked.ts";
import type { PolicyFile } from "./schema.ts";
import type { SandboxNetwork, SandboxSettings } from "./types.ts";
import { type EgressRule, parseEgressRule } from "../egress/rules.ts";
import { PATH_CHECK_ONLY_WARNING } from "../sandbox/notice.ts";

/** A POSIX-portable user name (`useradd`'s default rule, plus a trailing `$`). */
const USER_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$/;

/**
 * The `[sandbox]` settings of `file`, with defaults (`mode = "bwrap"`).
 *
 * @param file The validated policy file.
 * @param warnings Startup warnings; the path-check-only opt-in adds one.
 * @returns The settings, or one sentence naming the key.
 */
export function buildSandboxSettings(
  file: PolicyFile,
  warnings: string[],
): Checked<SandboxSettings> {
  const table = file.sandbox ?? {};
  const mode = table.mode ?? "bwrap";
  const acceptPathCheckOnly = table.accept_path_check_only ?? false;
  const refusal = sandboxOptOutRefusal({ mode, acceptPathCheckOnly });
  if (refusal !== null) return fail(refusal);
  if (mode === "none") warnings.push(PATH_CHECK_ONLY_WARNING);
  else if (acceptPathCheckOnly) {
    warnings.push(
      `Policy key "sandbox.accept_path_check_only" has no effect with mode = ${
        quote(mode)
      }: the kernel sandbox is on.`,
    );
  }
  const user = checkUser(table.user);
  if (!user.ok) return user;
  const network = checkNetwork(table.network, table.network_allow);
  if (!network.ok) return network;
  if (mode === "none" && network.value.network === "allowlist") {
    // Without the sandbox's network namespace commands reach the host's
    // network directly, and the allowlist would be a list nobody enforces.
    return fail(
      'Policy key "sandbox.network" is "allowlist", which only the kernel sandbox can enforce, but mode is "none"; use mode = "bwrap".',
    );
  }
  return pass({ mode, ...network.value, acceptPathCheckOnly, user: user.value });
}

/**
 * `network` and `network_allow`. The older boolean spelling keeps its
 * meaning (`false` = `"none"`, `true` = `"host"`). `network_allow` outside
 * `"allowlist"` is refused rather than ignored: an operator who wrote it
 * believes the sandbox's traffic is limited to it.
 */
function checkNetwork(
  value: boolean | SandboxNetwork | undefined,
  allow: readonly string[] | undefined,
): Checked<Pick<SandboxSettings, "network" | "networkAllow">> {
  const network: SandboxNetwork = value === true
    ? "host"
    : value === false
    ? "none"
    : value ?? "none";
  if (network !== "allowlist") {
    if (allow !== undefined) {
      return fail(
        `Policy key "sandbox.network_allow" is read only with network = "allowlist", but network is ${
          quote(network)
        }.`,
      );
    }
    return pass({ network, networkAllow: [] });
  }
  if (allow === undefined || allow.length === 0) {
    return fail(
      'Policy key "sandbox.network_allow" must list at least one "HOST:PORT" when network = "allowlist".',
    );
  }
  const rules: EgressRule[] = [];
  for (const entry of allow) {
    const parsed = parseEgressRule(entry);
    if (!parsed.ok) return fail(`Policy key "sandbox.network_allow": ${parsed.reason}`);
    rules.push(parsed.rule);
  }
  return pass({ network, networkAllow: Object.freeze(rules) });
}

/**
 * Why these settings may not run commands, or null: `mode = "none"` needs
 * `accept_path_check_only = true`. The one predicate, used by the loader and
 * again by the executor (which may be handed a policy built without it).
 *
 * @param sandbox The `[sandbox]` settings (`mode` and `acceptPathCheckOnly`).
 * @returns The refusal sentence, or null when commands may run.
 */
export function sandboxOptOutRefusal(
  sandbox: Pick<SandboxSettings, "mode" | "acceptPathCheckOnly">,
): string | null {
  if (sandbox.mode !== "none" || sandbox.acceptPathCheckOnly) return null;
  return 'Policy key "sandbox.mode" is "none", which runs commands without the kernel sandbox so the jail is only advisory; set [sandbox] accept_path_check_only = true to accept that, or use mode = "bwrap".';
}

function checkUser(value: string | number | undefined): Checked<number | string | null> {
  if (value === undefined) return pass(null);
  const uid = typeof value === "number" ? value : /^\d+$/.test(value) ? Number(value) : null;
  if (uid === 0 || value === "root") {
    return fail(
      'Policy key "sandbox.user" names root: commands never run as root; name a service user that owns the jail instead.',
    );
  }
  if (uid !== null) return pass(uid);
  if (typeof value === "string" && USER_NAME.test(value)) return pass(value);
  return fail(
    `Policy key "sandbox.user" must be a user name or a uid, got ${quote(String(value))}.`,
  );
}
