/**
 * `htmcp state migrate --policy FILE` applies the PostgreSQL schema's missing
 * migrations (the server never does: a schema change is the operator's,
 * taken once for a fleet); `htmcp state status --policy FILE` says which
 * backend the policy uses, whether it answers, and whether its schema is the
 * one this build needs.
 *
 * Exit codes: 0 done (migrate) / current and reachable (status); 1 the store
 * cannot be reached, the schema is behind or ahead (status) or a migration
 * failed (nothing of it stays: one transaction); 2 usage.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import {
  appliedVersion,
  describeError,
  migrate,
  openPool,
  SCHEMA_VERSION,
  schemaMismatch,
  type Sql,
  stateStoreFor,
} from "../state/mod.ts";
import { parseArgs } from "./args.ts";
import { processEnv } from "./env.ts";
import { loadPolicyForCli } from "./policy_arg.ts";

const USAGE = `Usage:
  htmcp state migrate --policy FILE   apply the PostgreSQL state schema's missing migrations
  htmcp state status --policy FILE    the state backend, whether it answers, its schema version`;

/** @returns The exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "migrate" && sub !== "status") {
    console.error(USAGE);
    return 2;
  }
  const parsed = parseArgs(rest, { values: ["--policy"] });
  if (!parsed.ok) {
    console.error(`htmcp: ${parsed.message}`);
    return 2;
  }
  if (parsed.args.positionals.length > 0 || parsed.args.rest !== null) {
    console.error(USAGE);
    return 2;
  }
  const policy = await loadPolicyForCli(parsed.args.values.get("--policy"));
  if (policy === null) return 1;
  const settings = policy.state;
  if (settings === undefined || settings.backend === "local") {
    return await localStatus(policy, sub);
  }
  const pool = await openPool(settings, processEnv());
  if (!pool.ok) {
    console.error(`htmcp: ${pool.message}`);
    return 1;
  }
  const where = `${settings.host}:${settings.port}`;
  try {
    return sub === "migrate" ? await runMigrate(pool.sql, where) : await status(pool.sql, where);
  } catch (error) {
    console.error(`htmcp: The PostgreSQL state store at ${where}: ${describeError(error)}.`);
    return 1;
  } finally {
    await pool.sql.end({ timeout: 2 }).catch(() => {});
  }
}

async function runMigrate(sql: Sql, where: string): Promise<number> {
  const applied = await migrate(sql);
  if (applied.length === 0) {
    console.log(`State schema at ${where} is current (version ${SCHEMA_VERSION}).`);
  }
  for (const step of applied) console.log(`Applied migration ${step.version}: ${step.name}.`);
  if (applied.length > 0) {
    console.log(`State schema at ${where} is now at version ${SCHEMA_VERSION}.`);
  }
  return 0;
}

async function status(sql: Sql, where: string): Promise<number> {
  const applied = await appliedVersion(sql);
  const mismatch = schemaMismatch(applied);
  console.log(`State backend: postgres at ${where}, reachable.`);
  if (mismatch !== null) {
    console.log(mismatch);
    return 1;
  }
  console.log(`State schema: version ${applied}, current.`);
  return 0;
}

async function localStatus(policy: Policy, sub: "migrate" | "status"): Promise<number> {
  if (sub === "migrate") {
    console.log("State backend: local; it has no schema, there is nothing to migrate.");
    return 0;
  }
  const store = stateStoreFor(policy);
  if (store === null) {
    console.log("State backend: local, without a state_dir: nothing is kept across restarts.");
    return 0;
  }
  const ready = await store.ping();
  console.log(`State backend: local, ${policy.stateDir} ${ready ? "writable" : "NOT writable"}.`);
  return ready ? 0 : 1;
}

/**
 * The state store as `htmcp check` reports it: one line, and whether a
 * server would start with it (reachable, writable, schema current).
 */
export async function checkStateStore(
  policy: Policy,
): Promise<{ readonly ok: boolean; readonly line: string }> {
  const settings = policy.state;
  if (settings === undefined || settings.backend === "local") {
    const store = stateStoreFor(policy);
    if (store === null) return { ok: true, line: "local, no state_dir (nothing kept)." };
    const ready = await store.ping();
    return {
      ok: ready,
      line: `local, ${policy.stateDir} ${ready ? "writable" : "NOT writable"}.`,
    };
  }
  const where = `${settings.host}:${settings.port}`;
  const pool = await openPool(settings, processEnv());
  if (!pool.ok) return { ok: false, line: `postgres: FAIL: ${pool.message}` };
  try {
    const applied = await appliedVersion(pool.sql);
    const mismatch = schemaMismatch(applied);
    return mismatch === null
      ? { ok: true, line: `postgres at ${where}, reachable, schema version ${applied} (current).` }
      : { ok: false, line: `postgres at ${where}: FAIL: ${mismatch}` };
  } catch (error) {
    return { ok: false, line: `postgres at ${where}: FAIL: ${describeError(error)}.` };
  } finally {
    await pool.sql.end({ timeout: 2 }).catch(() => {});
  }
}
