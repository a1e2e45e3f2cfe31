/**
 * How a session's stored cwd meets one call: the call's own `cwd` is taken
 * relative to it, and a command that leads with `cd` moves it. Pure; the
 * result is confined again by the jail on every call, like any requested cwd.
 *
 * @module
 */
import * as posix from "../path/mod.ts";
import { parsePlan } from "../plan/mod.ts";

/**
 * The cwd to confine for a call in a session.
 *
 * @param sessionCwd The session's jail-relative cwd.
 * @param requested The call's own `cwd`, if any (absolute means from the jail root's view of
 *   the host, exactly as without a session).
 */
export function cwdInSession(sessionCwd: string, requested: string | undefined): string {
  if (requested === undefined || requested === "") return sessionCwd;
  return requested.startsWith("/") ? requested : posix.join(sessionCwd, requested);
}

/** A confined real path as the session stores it: relative to the jail root, "." for the root. */
export function jailRelative(jailRoot: string, realPath: string): string {
  const relative = posix.relative(jailRoot, realPath);
  // Confinement already held; this guards the invariant rather than trusting it.
  if (relative.startsWith("..") || posix.isAbsolute(relative)) {
    throw new RangeError(`"${realPath}" is not inside the jail.`);
  }
  return relative === "" ? "." : relative;
}

/** True when the command text starts with `cd DIR`, as a shell would then keep the new folder. */
export function leadsWithCd(command: string | readonly string[]): boolean {
  if (typeof command !== "string") return false;
  const parsed = parsePlan(command);
  return parsed.ok && parsed.plan.steps[0]?.step.kind === "cd";
}
