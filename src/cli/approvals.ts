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
import { alwaysRuleFor, ApprovalStore, writeAlwaysFile } from "../approvals/mod.ts";
import { loadAlwaysFile } from "../config/mod.ts";
import type { Policy } from "../config/mod.ts";
import type { ApprovalRecord } from "../approvals/mod.ts";
import { closeStateStore, openStateStore, stateEnv, stateStoreFor } from "../state/mod.ts";
import { parseArgs } from "./args.ts";
import { loadPolicyForCli } from "./policy_arg.ts";
import { hiddenWordCount } from "../redact/mod.ts";
import { visibleText } from "../encoding/mod.ts";
import { processEnv } from "./env.ts";

const USAGE = `Usage:
  htmcp approvals list --policy FILE [--json]   approvals, newest last (pending first to answer)
  htmcp approvals allow ID --policy FILE        let the held command run once
  htmcp approvals allow ID --always --policy FILE
                                                 ... and exempt exactly this command (this caller,
                                                 this cwd, this prompt rule) from the prompt from
                                                 the server's next start ([approval] always_allow_file)
  htmcp approvals deny ID --policy FILE         refuse it`;

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "list" && sub !== "allow" && sub !== "deny") {
    console.error(USAGE);
    return 2;
  }
  const parsed = parseArgs(rest, { values: ["--policy"], switches: ["--json", "--always"] });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  const positionals = parsed.args.positionals;
  const always = parsed.args.switches.has("--always");
  if (
    parsed.args.rest !== null || positionals.length !== (sub === "list" ? 0 : 1) ||
    (always && sub !== "allow")
  ) {
    console.error(USAGE);
    return 2;
  }
  const policy = await loadPolicyForCli(parsed.args.values.get("--policy"));
  if (policy === null) return 1;
  const alwaysFile = policy.approval?.alwaysAllowFile ?? null;
  if (always && alwaysFile === null) {
    console.error(
      'htmcp: This policy names no [approval] always_allow_file, so "--always" has nowhere to keep the rule.',
    );
    return 1;
  }
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
    const id = positionals[0] as string;
    const done = await answer(approvals, id, sub === "allow");
    if (done !== 0 || !always || alwaysFile === null) return done;
    return await addAlwaysRule(approvals, id, alwaysFile, policy);
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
      `${record.id}  ${shown.state}  caller=${record.owner}  cwd=${visibleText(record.cwd)}  ` +
        `expires=${new Date(record.expires_ms).toISOString()}\n` +
        `  argv: ${JSON.stringify(record.argv)}\n` +
        (hiddenWordCount(record.argv) === 0
          ? ""
          : `  note: ${
            hiddenWordCount(record.argv)
          } word(s) hidden by the redactor; what runs holds text not shown\n`) +
        (record.stdin === undefined
          ? ""
          : `  stdin: ${record.stdin.bytes} bytes, its start (redacted): ${
            visibleText(JSON.stringify(record.stdin.preview))
          }\n`) +
        `  text: ${visibleText(record.command_raw)}\n` +
        `  rule: ${record.rule}\n` +
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

/**
 * Adds the "always allow" rule for an approval just allowed: read the file
 * again (checked as the server checks it), append, write atomically. The
 * server reads it at its next start and audits what it loaded.
 */
async function addAlwaysRule(
  approvals: ApprovalStore,
  id: string,
  path: string,
  policy: Policy,
): Promise<number> {
  const record = await approvals.get(id);
  if (record === null) {
    console.error(`htmcp: Approval ${id} disappeared before its rule was written.`);
    return 1;
  }
  const forbidden = [policy.jailRoot, ...(policy.stateDir === null ? [] : [policy.stateDir])];
  const loaded = await loadAlwaysFile(path, forbidden);
  if (!loaded.ok) {
    console.error(`htmcp: ${loaded.message}`);
    return 1;
  }
  const rule = alwaysRuleFor(record, `cli:${operatorName()}`, Date.now());
  const others = loaded.file.rules.filter((r) =>
    !(r.owner === rule.owner && r.digest === rule.digest && r.rule === rule.rule)
  );
  try {
    await writeAlwaysFile(path, [...others, rule]);
  } catch (error) {
    console.error(`htmcp: Cannot write the always-allow file "${path}": ${String(error)}.`);
    return 1;
  }
  console.log(
    `Always allowed from the server's next start: ${JSON.stringify(record.argv)} in ` +
      `${record.cwd} for caller ${record.owner} (rule ${record.rule}), in ${path}.`,
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
