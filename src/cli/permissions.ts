/**
 * `htmcp permissions --policy FILE [--transport stdio|http] [--format flags|json|systemd]
 * [--http HOST:PORT]`: prints the Deno permission set derived from the policy.
 * Read-only: it changes nothing and starts no server.
 *
 * @module
 */
import { parseArgs } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import {
  buildPermissionSet,
  permissionSetToJson,
  renderDenoFlags,
  shellLine,
  type Transport,
} from "../permissions/mod.ts";
import { run as runSystemd } from "./systemd.ts";

const FORMATS = new Set(["flags", "json", "systemd"]);
const TRANSPORTS = new Set(["stdio", "http"]);

/** @returns The exit code: 0 printed, 1 policy or set refused, 2 usage. */
export async function run(argv: readonly string[]): Promise<number> {
  const parsed = parseArgs(argv, { values: ["--policy", "--transport", "--format", "--http"] });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  const { values, positionals, rest } = parsed.args;
  if (positionals.length > 0 || rest !== null) {
    console.error("htmcp: permissions takes no positional arguments; see htmcp --help.");
    return 2;
  }
  const format = values.get("--format") ?? "flags";
  if (!FORMATS.has(format)) {
    console.error(`htmcp: --format is "${format}", but it must be flags, json or systemd.`);
    return 2;
  }
  const transportFlag = values.get("--transport");
  if (transportFlag !== undefined && !TRANSPORTS.has(transportFlag)) {
    console.error(`htmcp: --transport is "${transportFlag}", but it must be stdio or http.`);
    return 2;
  }
  if (format === "systemd") {
    // One renderer and one set of rules for units: `htmcp systemd`'s.
    const forward = ["--policy", "--http", "--transport"].flatMap((flag) => {
      const value = values.get(flag);
      return value === undefined ? [] : [flag, value];
    });
    return await runSystemd(forward);
  }
  const policy = await loadPolicyForCli(values.get("--policy"));
  if (policy === null) return 1;
  const listen = values.get("--http");
  const built = await buildPermissionSet(policy, {
    ...(transportFlag === undefined ? {} : { transport: transportFlag as Transport }),
    ...(listen === undefined ? {} : { listen }),
  });
  if (!built.ok) {
    console.error(`htmcp: ${built.reason}`);
    return 1;
  }
  const set = built.set;
  if (format === "json") {
    console.log(JSON.stringify(permissionSetToJson(set), null, 2));
  } else {
    console.log(shellLine(renderDenoFlags(set)));
  }
  return 0;
}
