/**
 * `[links]`: file download links, served over HTTP only.
 *
 * On by default, because a link is only ever made by a caller that may
 * already read the jail (`shell:read`), of one regular file it could
 * `cat` anyway, and lives at most `max_ttl_s`; `enabled = false` turns the
 * tools and the `/download/` route off for operators who want no way at
 * all to move bytes out of the jail over a URL.
 *
 * No environment variable overrides these keys (they bound what leaves the
 * jail, and the environment only says where files live).
 *
 * @module
 */
import { type Checked, fail, pass } from "./_checked.ts";
import type { PolicyFile } from "./schema.ts";
import type { LinkSettings } from "./types.ts";

/** Defaults: ten MiB, an hour, a day at most, 32 live links per caller. */
export const LINK_DEFAULTS = Object.freeze({
  maxFileBytes: 10 * 1024 * 1024,
  defaultTtlS: 3_600,
  maxTtlS: 86_400,
  maxLinksPerCaller: 32,
});

/**
 * The `[links]` settings of `file`, with defaults.
 *
 * @returns The settings, or one sentence naming the key.
 */
export function buildLinkSettings(file: PolicyFile): Checked<LinkSettings> {
  const links = file.links ?? {};
  const maxTtlS = links.max_ttl_s ?? Math.max(LINK_DEFAULTS.maxTtlS, links.default_ttl_s ?? 0);
  const defaultTtlS = links.default_ttl_s ?? Math.min(LINK_DEFAULTS.defaultTtlS, maxTtlS);
  // A default the maximum would refuse is a contradiction, not a choice: fail at startup.
  if (defaultTtlS > maxTtlS) {
    return fail(
      `Policy key "links.default_ttl_s" (${defaultTtlS}) must not exceed "links.max_ttl_s" (${maxTtlS}).`,
    );
  }
  return pass({
    enabled: links.enabled ?? true,
    maxFileBytes: links.max_file_bytes ?? LINK_DEFAULTS.maxFileBytes,
    defaultTtlMs: defaultTtlS * 1_000,
    maxTtlMs: maxTtlS * 1_000,
    maxLinksPerCaller: links.max_links_per_caller ?? LINK_DEFAULTS.maxLinksPerCaller,
  });
}
