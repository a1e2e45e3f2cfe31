/**
 * The PostgreSQL schema, as numbered migrations. `htmcp state migrate`
 * applies the missing ones; a server never does (a schema change in a fleet
 * is an operator's decision, taken once, not a race between replicas
 * starting). A server whose schema is behind, or ahead, refuses to start.
 *
 * Each migration runs in one transaction with the ones before it, under an
 * advisory lock, so two operators migrating at once apply each step once.
 *
 * @module
 */
import type { Sql } from "./client.ts";

/** One schema step. */
export interface Migration {
  /** The schema version this step brings the database to. */
  readonly version: number;
  /** Its name, as `htmcp state migrate` prints it. */
  readonly name: string;
  /** The SQL that applies it, in one transaction. */
  readonly sql: string;
}

/** Key of the advisory lock that serializes migrations ("htmc", 0). */
const MIGRATE_LOCK = [1752460643, 0] as const;

/** The schema, oldest first. Never edit one that has shipped: add the next. */
export const MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: "records (JSON text) with versions and change notification",
    sql: `
CREATE TABLE htmcp_records (
  kind text NOT NULL CHECK (kind ~ '^[A-Za-z0-9_-]{1,64}$'),
  id text NOT NULL CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  -- JSON text, not jsonb: jsonb refuses the NUL escape and reorders keys, and a
  -- record must read back exactly as on the local backend.
  value text NOT NULL,
  version bigint NOT NULL DEFAULT 1,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, id)
);
-- Every change, by any writer (a replica, the CLI, an operator's psql),
-- tells the listening replicas which record moved.
CREATE FUNCTION htmcp_records_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('htmcp_state', OLD.kind || '/' || OLD.id);
  ELSE
    PERFORM pg_notify('htmcp_state', NEW.kind || '/' || NEW.id);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER htmcp_records_changed AFTER INSERT OR UPDATE OR DELETE ON htmcp_records
  FOR EACH ROW EXECUTE FUNCTION htmcp_records_notify();
`,
  },
]);

/** The version this build needs. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** The applied version (0 for an empty database). */
export async function appliedVersion(sql: Sql): Promise<number> {
  const [table] = await sql`SELECT to_regclass('htmcp_schema') IS NOT NULL AS present`;
  if (table?.present !== true) return 0;
  const [row] = await sql`SELECT coalesce(max(version), 0)::int AS version FROM htmcp_schema`;
  return Number(row?.version ?? 0);
}

/** The sentence a server prints when the schema does not match, or null when it does. */
export function schemaMismatch(applied: number): string | null {
  if (applied === SCHEMA_VERSION) return null;
  if (applied < SCHEMA_VERSION) {
    return `The PostgreSQL state schema is at version ${applied}, and this htmcp needs version ${SCHEMA_VERSION}: run "htmcp state migrate --policy FILE" once, then start the server again.`;
  }
  return `The PostgreSQL state schema is at version ${applied}, newer than this htmcp understands (${SCHEMA_VERSION}): run the htmcp version that migrated it.`;
}

/** One applied step. */
export interface AppliedMigration {
  /** The schema version the step brought the database to. */
  readonly version: number;
  /** Its name, as `htmcp state migrate` prints it. */
  readonly name: string;
}

/**
 * Applies every missing migration in one transaction.
 *
 * @returns The steps applied now (empty when the schema was current).
 * @throws When the database refuses a step (nothing of the transaction stays),
 *   or when its schema is newer than this build.
 */
export async function migrate(sql: Sql): Promise<AppliedMigration[]> {
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATE_LOCK[0]}, ${MIGRATE_LOCK[1]})`;
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS htmcp_schema (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    const [row] = await tx`SELECT coalesce(max(version), 0)::int AS version FROM htmcp_schema`;
    const applied = Number(row?.version ?? 0);
    if (applied > SCHEMA_VERSION) throw new Error(schemaMismatch(applied) ?? "");
    const done: AppliedMigration[] = [];
    for (const step of MIGRATIONS) {
      if (step.version <= applied) continue;
      await tx.unsafe(step.sql);
      await tx`INSERT INTO htmcp_schema (version, name) VALUES (${step.version}, ${step.name})`;
      done.push({ version: step.version, name: step.name });
    }
    return done;
  }) as AppliedMigration[];
}
