/**
 * Startup refusals and warnings for the HTTP server's exposure. They run on
 * the address actually requested (the `--http` flag or `[http] listen`), so a
 * command-line listen address cannot skip a check the policy loader made.
 *
 * Fails closed: a configuration that would put an unauthenticated shell on a
 * reachable address stops the server with one sentence.
 *
 * @module
 */
import type { Policy } from "../../config/types.ts";
import { isLoopbackName, isWildcardName, type ListenAddress } from "./address.ts";

export type ExposureCheck =
  | { readonly ok: true; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly message: string };

/**
 * Decides whether `policy.auth` may be served on `address` with `baseUrl`.
 *
 * - `mode = "none"` only on a loopback listen address, and never behind a
 *   non-loopback `base_url` (a tunnel or proxy would publish it), with a loud
 *   warning;
 * - `allow_localhost_bypass` never behind a non-loopback `base_url`: a local
 *   proxy or tunnel makes every remote request arrive from loopback;
 * - OAuth on every interface (`0.0.0.0`, `[::]`) needs a `base_url`, because
 *   the issuer and token audience must be a name clients actually use;
 * - OAuth needs a state directory for its signing secret and clients.
 */
export function checkExposure(
  policy: Policy,
  address: ListenAddress,
  baseUrl: string | null,
): ExposureCheck {
  const listen = `${address.host}:${address.port}`;
  const publicBase = baseUrl !== null && !isLoopbackName(new URL(baseUrl).hostname);
  const warnings: string[] = [];
  if (policy.auth.mode === "none") {
    if (!isLoopbackName(address.host)) {
      return {
        ok: false,
        message:
          `[auth] mode = "none" is refused: the listen address "${listen}" is not loopback, so anyone who reaches it could run commands; use mode = "oauth" or listen on 127.0.0.1.`,
      };
    }
    if (publicBase) {
      return {
        ok: false,
        message:
          `[auth] mode = "none" is refused: the base URL "${baseUrl}" publishes this loopback server beyond this machine; use mode = "oauth".`,
      };
    }
    warnings.push(
      `WARNING: AUTHENTICATION IS OFF ([auth] mode = "none"). Every local user and process that can reach http://${listen}/mcp can run the policy's commands. Use this only for local development.`,
    );
    return { ok: true, warnings };
  }
  if (policy.auth.allowLocalhostBypass) {
    if (publicBase) {
      return {
        ok: false,
        message:
          `[auth] allow_localhost_bypass is refused with the base URL "${baseUrl}": behind a proxy or tunnel every remote request arrives from loopback and would skip authentication.`,
      };
    }
    warnings.push(
      `WARNING: [auth] allow_localhost_bypass = true: requests from this machine's loopback address need no token. Every local user and process can run the policy's commands; never use this on a shared host.`,
    );
  }
  if (isWildcardName(address.host) && baseUrl === null) {
    return {
      ok: false,
      message:
        `Listening on every interface ("${listen}") needs [http] base_url (or HTMCP_BASE_URL): the OAuth issuer and token audience must be the name clients use.`,
    };
  }
  // External mode keeps no OAuth state: the provider holds clients and keys.
  // The PostgreSQL state backend holds them for a fleet.
  const sharedState = policy.state?.backend === "postgres";
  if (policy.stateDir === null && policy.auth.mode !== "external" && !sharedState) {
    return {
      ok: false,
      message:
        `HTTP with OAuth needs a state directory for its signing secret and approved clients; set state_dir in the policy or HTMCP_STATE_DIR.`,
    };
  }
  return { ok: true, warnings };
}
