/**
 * The `htmcp` command line: parse the verb, dispatch, exit with its code.
 * Wiring only; every verb lives in `src/cli/<verb>.ts`.
 *
 * @module
 */
import { missingPolicyMessage, parseCommandLine, POLICY_VERBS } from "./cli/args.ts";
import { processEnv } from "./cli/env.ts";
import { VERSION } from "./version.ts";

export const USAGE = `htmcp ${VERSION}: a security-hardened MCP terminal server

Usage:
  htmcp [serve] --policy FILE [--http HOST:PORT]   serve MCP over stdio (default) or HTTP
  htmcp explain --policy FILE -- COMMAND...        print the verdict for COMMAND (argv as given); runs nothing
  htmcp explain --policy FILE --text TEXT          the same for command text, split as run_command does
  htmcp check --policy FILE [--allow-unconfined]   validate the policy and prove the layers
  htmcp permissions --policy FILE [--transport stdio|http] [--format flags|json|systemd]
  htmcp systemd --policy FILE [--http HOST:PORT] [--user] [--user-name NAME] [--env-file FILE]
                                                   print a hardened systemd unit (HTTP)
  htmcp audit verify FILE...                       verify the audit log's hash chain (series oldest first)
    [--checkpoints FILE --key KEYFILE]             ...and name the records missing after a signed checkpoint
  htmcp audit head FILE                            print the log's chain head (seq and hash) to pin elsewhere
  htmcp audit key [--policy FILE]                  print the public key that signs audit checkpoints
  htmcp audit show FILE [--json] [filters]         the audit log as a table of calls
  htmcp audit tail [-f] [-n N] FILE [filters]      the last calls; -f follows the log
  htmcp audit stats FILE [--json] [filters]        calls, refusals, durations, clients
  htmcp policy test FILE [--json]                  run the policy's own [[tests]]
  htmcp policy lint FILE [--json]                  findings to read before trusting a policy
  htmcp policy diff OLD NEW [--replay LOG] [--commands FILE]  verdicts that change
  htmcp policy suggest --from LOG [--policy FILE]  refusals grouped, for review (edits nothing)
  htmcp auth clients --policy FILE                 list approved OAuth clients
  htmcp auth revoke CLIENT_ID --policy FILE        revoke a client and its tokens
  htmcp state migrate --policy FILE                apply the PostgreSQL state schema's migrations
  htmcp state status --policy FILE                 the state backend, reachable, schema current
  htmcp approvals list --policy FILE [--json]      commands held by prompt rules, and their answers
  htmcp approvals allow|deny ID --policy FILE      answer one (the held command runs once, or never)
  htmcp version                                    print the version
  htmcp --help                                     print this help

The policy file may also come from HTMCP_POLICY_FILE.
`;

type VerbRunner = (args: readonly string[]) => Promise<number>;

/**
 * Verbs load lazily, so `htmcp version` does not pay for the MCP SDK and a
 * verb's own failure to load cannot take the others down.
 */
const VERBS: ReadonlyMap<string, () => Promise<VerbRunner>> = new Map([
  ["serve", async () => (await import("./cli/serve.ts")).run],
  ["explain", async () => (await import("./cli/explain.ts")).run],
  ["audit", async () => (await import("./cli/audit.ts")).run],
  ["check", async () => (await import("./cli/check.ts")).run],
  ["permissions", async () => (await import("./cli/permissions.ts")).run],
  ["systemd", async () => (await import("./cli/systemd.ts")).run],
  ["auth", async () => (await import("./cli/auth.ts")).run],
  ["policy", async () => (await import("./cli/policy.ts")).run],
  ["state", async () => (await import("./cli/state.ts")).run],
  ["approvals", async () => (await import("./cli/approvals.ts")).run],
]);

/**
 * Runs the CLI.
 *
 * @param argv Arguments after the program name.
 * @returns The process exit code.
 */
export async function main(argv: readonly string[]): Promise<number> {
  const line = parseCommandLine(argv);
  if (!line.ok) {
    console.error(`htmcp: ${line.message}`);
    return 2;
  }
  if (line.action === "help") {
    console.log(USAGE);
    return 0;
  }
  if (line.action === "version") {
    console.log(`htmcp ${VERSION}`);
    return 0;
  }
  // A policy verb with no policy at all is a usage mistake, said before the
  // loader would name whichever key it read first.
  if (POLICY_VERBS.has(line.verb)) {
    const missing = missingPolicyMessage(line.parsed.values.get("--policy"), processEnv());
    if (missing !== null) {
      console.error(`htmcp: ${missing}`);
      return 2;
    }
  }
  const loader = VERBS.get(line.verb);
  if (loader === undefined) throw new TypeError(`No runner for the verb "${line.verb}".`);
  const run = await loader();
  return await run(line.verbArgs);
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
