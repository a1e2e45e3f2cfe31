/**
 * The readiness check of external mode: can the identity provider's key set
 * be fetched now? Through the same bounded fetch as the verifier (size and
 * time limits), at the configured `jwks_uri` or the one its discovery
 * document names. Readiness caches its report, so this runs at most once per
 * cache interval however often `/readyz` is asked.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { DEFAULT_FETCH_BOUNDS, discoverJwksUri, fetchJsonObject } from "../auth/bearer/mod.ts";

/**
 * The probe for `policy`, or null when it is not in external mode.
 *
 * @param policy The loaded policy (its `[auth]` mode and external provider).
 * @returns A probe resolving true when the key set was fetched and holds a key, else false.
 */
export function jwksProbeFor(policy: Policy): (() => Promise<boolean>) | null {
  const external = policy.auth.mode === "external" ? policy.auth.external : null;
  if (external === null) return null;
  return async () => {
    try {
      const uri = external.jwksUri ?? await discoverJwksUri(external.issuer, DEFAULT_FETCH_BOUNDS);
      const doc = await fetchJsonObject(
        uri,
        { headers: { accept: "application/json" } },
        DEFAULT_FETCH_BOUNDS,
      );
      return Array.isArray(doc.keys) && doc.keys.length > 0;
    } catch {
      return false;
    }
  };
}
