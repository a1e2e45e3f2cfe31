/**
 * `[state]`: where durable state lives. `backend = "local"` (the default) is
 * the state directory; `backend = "postgres"` is a PostgreSQL database shared
 * by a fleet of replicas.
 *
 * The database URL carries a password, so it never appears in the policy
 * (which is hashed, described and often committed): it comes from
 * `HTMCP_STATE_URL` or from a file named by `[state] url_file` that only the
 * server's user can read. The loader reads it once to learn the host and
 * port (the only outbound address the permission layer will grant); the
 * backend reads it again, from the same source, when it connects.
 *
 * @module
 */
import { resolve } from "../path/mod.ts";
import { type Checked, fail, pass } from "./_checked.ts";
import type { StateSettings } from "./types.ts";
import { parseStateUrl, readStateUrl } from "../state/postgres/url.ts";

export {
  parseStateUrl,
  readStateUrl,
  STATE_URL_ENV,
  type StateEndpoint,
} from "../state/postgres/url.ts";

/** The file's `[state]` table as the schema parsed it. */
export interface StateTable {
  readonly backend?: "local" | "postgres" | undefined;
  readonly url_file?: string | undefined;
}

/**
 * Builds `[state]` from the file and the environment.
 *
 * @param table The parsed `[state]` table, or undefined.
 * @param env The server's environment.
 * @param baseDir The policy file's folder (relative `url_file` resolves there).
 * @returns The settings, or a sentence naming the key.
 */
export async function buildStateSettings(
  table: StateTable | undefined,
  env: Readonly<Record<string, string | undefined>>,
  baseDir: string,
): Promise<Checked<StateSettings>> {
  const backend = table?.backend ?? "local";
  if (backend === "local") {
    if (table?.url_file !== undefined) {
      return fail('Policy key "state.url_file" is set, but "state.backend" is not "postgres".');
    }
    return pass({ backend: "local" });
  }
  const urlFile = table?.url_file === undefined ? null : resolve(baseDir, table.url_file);
  const url = await readStateUrl({ urlFile }, env);
  if (!url.ok) return url;
  const endpoint = parseStateUrl(url.value);
  if (!endpoint.ok) return endpoint;
  return pass({
    backend: "postgres",
    urlFile,
    host: endpoint.value.host,
    port: endpoint.value.port,
  });
}
