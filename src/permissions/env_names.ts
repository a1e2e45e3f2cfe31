/**
 * The `HTMCP_*` environment names the program reads, each with the reason.
 * The server is granted exactly these plus the policy's `[env] pass` names;
 * a test scans `src/` so a new `HTMCP_*` name cannot be read without being
 * listed here (it would fail with `NotCapable` under the generated set).
 *
 * @module
 */

/** Name -> why the server reads it. */
export const HTMCP_ENV_NAMES: ReadonlyMap<string, string> = new Map([
  ["HTMCP_POLICY_FILE", "names the policy file when --policy is absent"],
  ["HTMCP_JAIL_ROOT", "overrides jail_root"],
  ["HTMCP_AUDIT_LOG", "overrides audit_log"],
  ["HTMCP_AUDIT_FAIL_MODE", "overrides audit_fail_mode"],
  ["HTMCP_STATE_DIR", "overrides state_dir (OAuth secret and clients)"],
  ["HTMCP_STATE_URL", 'the PostgreSQL state store\'s URL ([state] backend = "postgres")'],
  ["HTMCP_BASE_URL", "overrides [http] base_url"],
  ["HTMCP_OAUTH_ADMIN_PIN", "the PIN that approves OAuth clients and held commands"],
  ["HTMCP_OAUTH_ACCESS_TOKEN_TTL_S", "overrides the access-token lifetime"],
  ["HTMCP_FD_LIMIT", "the file-descriptor limit the launcher read, which sizes max_connections"],
  [
    "HTMCP_START_CACHED",
    "the start cache the installed command reused a start from: any difference from the set is refused",
  ],
  ["HTMCP_START_FLAGS", "the permission flags the installed command started a cached start with"],
]);
