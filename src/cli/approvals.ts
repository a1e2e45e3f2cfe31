/**
 * `htmcp approvals list|allow ID|deny ID --policy FILE`: the operator's
 * answers to commands a prompt rule holds. The records live in the
 * policy's state store; this verb is the only writer of an answer (no MCP
 * tool reaches it), and it records who answered: the OS user running it.
 *
 * Exit codes: 0 done; 1 no such pending approval (unknown, already
 * answered, used or expired) or no state store; 2 usage.
 *
 * @module
 */
import { ApprovalStore } from "../approvals/mod.ts";
import type { ApprovalRecord } from "../approvals/mod.ts";
import { closeStateStore, openStateStore, stateEnv, stateStoreFor } from "../state/mod.ts";
import { parseArgs } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import { processEnv } from "./env.ts";

const USAGE = `Usage:
  htmcp approvals list --policy FILE [--json]   approvals, newest last (pending first to answer)
  htmcp approvals allow ID --policy FILE        let the held command run once
  htmcp approvals deny ID --policy FILE         refuse it`;

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "list" && sub !== "allow" && sub !== "deny") {
    console.error(USAGE);
    return 2;
  }
  const parsed = parseArgs(rest, { values: ["--policy"], switches: ["--json"] });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  const positionals = parsed.args.positionals;
  if (parsed.args.rest !== null || positionals.length !== (sub === "list" ? 0 : 1)) {
    console.error(USAGE);
    return 2;
  }
  const policy = await loadPolicyForCli(parsed.args.values.get("--policy"));
  if (policy === null) return 1;
  const opened = await openStateStore(policy, stateEnv());
  if (!opened.ok) {
    console.error(`htmcp: ${opened.message}`);
    return 1;
  }
  const store = stateStoreFor(policy);
  if (store === null) {
    console.error("htmcp: This policy has no state_dir, so it holds no approvals.");
    return 1;
  }
  try {
    const approvals = new ApprovalStore(store);
    if (sub === "list") return await list(approvals, parsed.args.switches.has("--json"));
    return await answer(approvals, positionals[0] as string, sub === "allow");
  } finally {
    await closeStateStore(policy);
  }
}

async function list(approvals: ApprovalStore, json: boolean): Promise<number> {
  const records = await approvals.list();
  if (json) {
    console.log(JSON.stringify(records.map(view)));
    return 0;
  }
  if (records.length === 0) {
    console.log("No approvals.");
    return 0;
  }
  for (const record of records) {
    const shown = view(record);
    console.log(
      `${record.id}  ${shown.state}  caller=${record.owner}  cwd=${record.cwd}  ` +
        `expires=${new Date(record.expires_ms).toISOString()}\n` +
        `  argv: ${JSON.stringify(record.argv)}\n  rule: ${record.rule}\n` +
        `  why:  ${record.justification}` +
        (record.job_id === undefined ? "" : `\n  job:  ${record.job_id} starts it when allowed`) +
        (record.answered_by === null ? "" : `\n  answered by ${record.answered_by}`),
    );
  }
  return 0;
}

/** A record as listed: a pending one past its time shows as expired. */
function view(record: ApprovalRecord): ApprovalRecord {
  return record.state === "pending" && Date.now() >= record.expires_ms
    ? { ...record, state: "expired" }
    : record;
}

async function answer(approvals: ApprovalStore, id: string, allow: boolean): Promise<number> {
  const by = `cli:${operatorName()}`;
  const done = await approvals.answer(id, allow, by);
  if (!done.ok) {
    const why = done.state === "missing"
      ? "there is no such approval"
      : `it is ${done.state}, not pending`;
    console.error(`htmcp: Cannot ${allow ? "allow" : "deny"} approval ${id}: ${why}.`);
    return 1;
  }
  console.log(
    `Approval ${id} ${allow ? "allowed" : "denied"} by ${by}: ${JSON.stringify(done.record.argv)}` +
      (allow
        ? done.record.job_id === undefined
          ? " may run once, by the same caller, before it expires."
          : ` starts once, as job ${done.record.job_id}.`
        : " will not run."),
  );
  return 0;
}

/** The OS user answering: the name of the process's uid when known, else the uid. */
function operatorName(): string {
  const env = processEnv();
  let uid: number | null = null;
  try {
    uid = Deno.uid();
  } catch {
    // Without sys permission the name alone is recorded.
  }
  const name = env.USER ?? env.LOGNAME;
  if (name === undefined || name === "") return uid === null ? "unknown" : `uid ${uid}`;
  return uid === null ? name : `${name} (uid ${uid})`;
}
