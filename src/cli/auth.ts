/**
 * `htmcp auth clients --policy FILE [--json]` lists the approved OAuth
 * clients; `htmcp auth revoke CLIENT_ID --policy FILE` revokes one. A
 * revocation is appended to `state_dir/oauth-revocations.jsonl`, which the
 * server re-checks on every request, so the client's tokens stop working at
 * once without a restart. Exit 0 on success, 1 on failure, 2 on usage.
 *
 * @module
 */
import { policyHash } from "../policy_tools/identity.ts";
import { AuditLog } from "../audit/mod.ts";
import { type ClientRecord, ClientRegistry } from "../auth/mod.ts";
import type { Policy } from "../config/types.ts";
import { createRedactor } from "../redact/mod.ts";
import { parseArgs } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import { processEnv } from "./env.ts";
import { closeStateStore, describeError, openStateStore } from "../state/mod.ts";

const USAGE = `Usage:
  htmcp auth clients --policy FILE [--json]   list approved OAuth clients
  htmcp auth revoke CLIENT_ID --policy FILE   revoke a client; its tokens stop working at once`;

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "clients" && sub !== "revoke") {
    console.error(USAGE);
    return 2;
  }
  const parsed = parseArgs(rest, {
    values: ["--policy"],
    switches: sub === "clients" ? ["--json"] : [],
  });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  const positionals = parsed.args.positionals;
  const wanted = sub === "revoke" ? 1 : 0;
  if (positionals.length !== wanted || parsed.args.rest !== null) {
    console.error(USAGE);
    return 2;
  }
  const policy = await loadPolicyForCli(parsed.args.values.get("--policy"));
  if (policy === null) return 1;
  if (policy.state?.backend === "postgres") {
    // A fleet's clients and revocations are in the shared store: a revocation
    // here is in force on every replica within a second.
    const opened = await openStateStore(policy, processEnv());
    if (!opened.ok || opened.store === null) {
      console.error(`htmcp: ${opened.ok ? "The state store did not open." : opened.message}`);
      return 1;
    }
    try {
      const registry = new ClientRegistry(opened.store);
      return sub === "clients"
        ? await listClients(registry, parsed.args.switches.has("--json"))
        : await revoke(registry, policy, positionals[0] as string);
    } catch (error) {
      console.error(
        `htmcp: Cannot read the OAuth state in the state store: ${describeError(error)}.`,
      );
      return 1;
    } finally {
      await closeStateStore(policy);
    }
  }
  if (policy.stateDir === null) {
    console.error(
      "htmcp: The policy sets no state_dir (nor HTMCP_STATE_DIR), so there are no OAuth clients.",
    );
    return 1;
  }
  const registry = new ClientRegistry(policy.stateDir);
  try {
    return sub === "clients"
      ? await listClients(registry, parsed.args.switches.has("--json"))
      : await revoke(registry, policy, positionals[0] as string);
  } catch (error) {
    console.error(`htmcp: Cannot read the OAuth state in "${policy.stateDir}": ${error}.`);
    return 1;
  }
}

async function listClients(registry: ClientRegistry, json: boolean): Promise<number> {
  const { clients, skippedLines } = await registry.approvedClients();
  if (skippedLines > 0) {
    console.error(
      `htmcp: warning: ${skippedLines} unreadable line(s) in the clients file were skipped.`,
    );
  }
  const list = [...clients.values()];
  if (json) {
    console.log(JSON.stringify(list, null, 2));
    return 0;
  }
  if (list.length === 0) {
    console.log("No approved OAuth clients.");
    return 0;
  }
  for (const client of list) console.log(describe(client));
  return 0;
}

/** One line per client: id, approval time, registered scopes ("any" if none), redirect hosts, name. */
function describe(client: ClientRecord): string {
  const hosts = [...new Set(client.redirect_uris.map((uri) => hostOf(uri)))].join(",");
  const approved = new Date(client.approved_at * 1000).toISOString();
  const name = JSON.stringify(client.client_name ?? "");
  return `${client.client_id}  approved ${approved}  scopes ${
    client.scope === "" ? "any" : client.scope
  }  redirect ${hosts}  name ${name}`;
}

function hostOf(uri: string): string {
  try {
    return new URL(uri).host;
  } catch {
    return "?";
  }
}

async function revoke(registry: ClientRegistry, policy: Policy, clientId: string): Promise<number> {
  const result = await registry.revokeClient(clientId, Math.floor(Date.now() / 1000));
  if (!result.ok) {
    console.error(`htmcp: ${result.message}`);
    return 1;
  }
  console.log(`Revoked OAuth client "${clientId}"; its tokens stop working at the next request.`);
  // Every process may append to the shared log, so the revocation is
  // recorded by the command that made it; each running server adds its own
  // client_revocation_applied when it next reads the revocation list.
  const opened = await AuditLog.open(policy.auditLog, "closed", {
    redact: createRedactor(policy.redaction).redact,
    policyHash: await policyHash(policy),
    warn: (line) => console.error(line),
  });
  if (!opened.ok) {
    console.error(
      `htmcp: warning: ${opened.reason} The revocation is not in the audit log; a running server records that it applied it.`,
    );
    return 0;
  }
  try {
    const written = await opened.log.writeEvent("client_revoked", { client_id: clientId });
    if (!written.ok) console.error(`htmcp: warning: ${written.reason}`);
  } finally {
    await opened.log.close();
  }
  return 0;
}
