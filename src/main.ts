/**
 * The `htmcp` command line: parse the verb, dispatch, exit with its code.
 * Wiring only; every verb lives in `src/cli/<verb>.ts`.
 *
 * @module
 */
import { VERSION } from "./version.ts";

export const USAGE = `htmcp ${VERSION}: a security-hardened MCP terminal server

Usage:
  htmcp [serve] --policy FILE [--http HOST:PORT]   serve MCP over stdio (default) or HTTP
  htmcp explain --policy FILE -- COMMAND...        print the verdict for COMMAND; runs nothing
  htmcp check --policy FILE [--allow-unconfined]   validate the policy and prove the layers
  htmcp permissions --policy FILE [--transport stdio|http] [--format flags|json|systemd]
  htmcp systemd --policy FILE [--user]             print a hardened systemd unit
  htmcp audit verify FILE...                       verify the audit log's hash chain (series oldest first)
  htmcp audit head FILE                            print the log's chain head (seq and hash) to pin elsewhere
  htmcp auth clients --policy FILE                 list approved OAuth clients
  htmcp auth revoke CLIENT_ID --policy FILE        revoke a client and its tokens
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
]);

/**
 * Runs the CLI.
 *
 * @param argv Arguments after the program name.
 * @returns The process exit code.
 */
export async function main(argv: readonly string[]): Promise<number> {
  const first = argv[0];
  if (first === "--help" || first === "-h" || first === "help") {
    console.log(USAGE);
    return 0;
  }
  if (first === "version" || first === "--version" || first === "-V") {
    console.log(`htmcp ${VERSION}`);
    return 0;
  }
  // `serve` is the default verb: `htmcp --policy FILE` serves.
  const isVerb = first !== undefined && !first.startsWith("-");
  const verb = isVerb ? first : "serve";
  const loader = VERBS.get(verb);
  if (loader === undefined) {
    console.error(`Unknown command "${verb}"; see htmcp --help.`);
    return 2;
  }
  const run = await loader();
  return await run(isVerb ? argv.slice(1) : argv);
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
