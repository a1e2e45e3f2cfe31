/**
 * The download-link feature of one HTTP server: the store, the sweep that
 * deletes expired links, and the route. Built only over HTTP (a stdio
 * server has no URL to hand out) and only when `[links] enabled` and a
 * `state_dir` exist (links are durable or absent, like sessions).
 *
 * @module
 */
import type { AuditFailMode, LinkSettings } from "../config/types.ts";
import { type LinkAudit, ownerClientId } from "./audit_events.ts";
import { every } from "../timers/mod.ts";
import { handleDownload } from "./route.ts";
import { LinkStore } from "./store.ts";

/** How often expired links are swept while the server runs. */
export const SWEEP_INTERVAL_MS = 60_000;

/** A running link feature. */
export interface LinkService {
  /** The links themselves (the tools create, list and revoke through it). */
  readonly store: LinkStore;
  /** Serves `GET /download/{token}`. */
  route(request: Request, remoteAddr: string): Promise<Response>;
  /** Deletes expired links now (also run at start and every `SWEEP_INTERVAL_MS`). */
  sweep(): Promise<void>;
  /** Stops the periodic sweep. */
  stop(): void;
}

/** What of a policy the link feature reads (a loaded `Policy` is one). */
export interface LinksPolicy {
  /** `[links]`: whether they are on, and their limits. */
  readonly links: LinkSettings;
  /** Where links and snapshots are kept; null: no links (they are durable or absent). */
  readonly stateDir: string | null;
  /** The jail the linked files must be in. */
  readonly jailRoot: string;
  /** `closed`: a download whose audit record could not be written is not served. */
  readonly auditFailMode: AuditFailMode;
}

/**
 * Starts links for `policy`, or returns null when they are off.
 *
 * @param policy The frozen policy.
 * @param audit Where link events go.
 * @param now The clock (tests move it).
 * @returns The running feature (its sweep already run once), or null.
 */
export async function startLinks(
  policy: LinksPolicy,
  audit: LinkAudit,
  now: () => number = Date.now,
): Promise<LinkService | null> {
  if (!policy.links.enabled || policy.stateDir === null) return null;
  const store = new LinkStore(policy.stateDir, policy.jailRoot, policy.links, now);
  const sweep = async () => {
    try {
      for (const record of await store.sweep()) {
        await audit.writeEvent("link_expired", {
          client_id: ownerClientId(record.owner),
          link_id: record.link_id,
          path: record.path,
        });
      }
    } catch (error) {
      await audit.writeEvent("internal_error", {
        call_id: null,
        where: "links sweep",
        message: error instanceof Error ? error.message : String(error),
      });
    }
  };
  await sweep();
  // The sweep must not keep a stopping process alive.
  const timer = every(SWEEP_INTERVAL_MS, () => void sweep(), { keepAlive: false });
  return {
    store,
    route: (request, remoteAddr) =>
      handleDownload({ store, audit, failMode: policy.auditFailMode }, request, remoteAddr),
    sweep,
    stop: () => timer.cancel(),
  };
}
