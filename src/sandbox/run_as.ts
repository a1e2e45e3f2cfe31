/**
 * Who commands run as: a uid that can write the jail, never real root, and,
 * for a non-root server, only the server's own uid. Pure: the executor
 * gathers the facts (server uid, jail owner, the `[sandbox] user` entry) and
 * this decides.
 *
 * Why never root: uid 0 on the host passes every file-permission check by
 * ownership alone (no capability needed for a root-owned 0600 file), so even
 * a capability-free command as root reaches what the jail was meant to hide.
 * Why the jail's owner by default: it is the one identity an operator has
 * already said may write there, and a jail the command cannot write is why
 * operators used to switch the sandbox off.
 *
 * The gid is the user's primary group from the passwd database, or the same
 * number as the uid when the uid has no passwd entry; gid 0 is refused like
 * uid 0 (group root reads and writes what the host's group permissions give
 * root's group).
 *
 * @module
 */
import type { RunAsIdentity } from "./bwrap_args.ts";

/** A user as the passwd database knows it (`gid` null: no entry for this uid). */
export interface UserEntry {
  /** The numeric user id. */
  readonly uid: number;
  /** The passwd entry's primary gid, or null when the uid has no entry. */
  readonly gid: number | null;
}

/** The facts `chooseRunAs` decides from. */
export interface RunAsFacts {
  /** The uid the server runs as: only root (0) can run commands as another user. */
  readonly serverUid: number;
  /** The jail root, named in the messages. */
  readonly jailRoot: string;
  /** Owner of the jail root, and its passwd entry's primary gid (null: none). */
  readonly jailOwner: UserEntry;
  /** `[sandbox] user` as configured (for messages), or null when unset. */
  readonly configuredLabel: string | null;
  /** `[sandbox] user` resolved, or null when unset. */
  readonly configured: UserEntry | null;
}

/** The decision: `runAs` null keeps the server's own uid. */
export type RunAsChoice =
  | {
    readonly ok: true;
    readonly runAs: RunAsIdentity | null;
    /** Where the identity came from, for `htmcp check` and the startup line. */
    readonly source: "the server's own uid" | "the jail's owner" | "[sandbox] user";
  }
  | { readonly ok: false; readonly message: string };

/**
 * Decides the identity commands run as.
 *
 * @param facts The server's uid, the jail's owner, `[sandbox] user`.
 * @returns The identity, or one sentence saying why none is safe, with the fix.
 */
export function chooseRunAs(facts: RunAsFacts): RunAsChoice {
  const { serverUid, configured, configuredLabel } = facts;
  const named = configuredLabel === null ? "" : `[sandbox] user = ${configuredLabel}`;
  if (serverUid !== 0) {
    // Without root the server cannot become anyone else; its own uid is
    // what the user namespace maps, and it holds no capability on the host.
    if (configured !== null && configured.uid !== serverUid) {
      return {
        ok: false,
        message:
          `Cannot start: ${named} (uid ${configured.uid}) is not the server's own uid ${serverUid}, and a non-root server can only run commands as itself; remove [sandbox] user or start the server as that user.`,
      };
    }
    return { ok: true, runAs: null, source: "the server's own uid" };
  }
  if (configured !== null) {
    const identity = identityOf(configured);
    const refusal = rootRefusal(identity, named);
    if (refusal !== null) return { ok: false, message: refusal };
    return { ok: true, runAs: identity, source: "[sandbox] user" };
  }
  if (facts.jailOwner.uid === 0) {
    return {
      ok: false,
      message:
        `Cannot start: the server runs as root and the jail root "${facts.jailRoot}" is owned by root, and commands never run as root; chown the jail to a service user (for example "chown -R htmcp: ${facts.jailRoot}") or set [sandbox] user to a user that may write it.`,
    };
  }
  const identity = identityOf(facts.jailOwner);
  const refusal = rootRefusal(identity, `the jail's owner (uid ${identity.uid})`);
  if (refusal !== null) return { ok: false, message: refusal };
  return { ok: true, runAs: identity, source: "the jail's owner" };
}

function identityOf(entry: UserEntry): RunAsIdentity {
  return Object.freeze({ uid: entry.uid, gid: entry.gid ?? entry.uid });
}

function rootRefusal(identity: RunAsIdentity, who: string): string | null {
  if (identity.uid === 0) {
    return `Cannot start: ${who} is uid 0, and commands never run as root; name a service user instead.`;
  }
  if (identity.gid === 0) {
    return `Cannot start: the primary group of ${who} is root (gid 0), and commands never run with group root; give that user a group of its own.`;
  }
  return null;
}
