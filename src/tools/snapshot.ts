/**
 * Reads untrusted tool arguments exactly once into a frozen snapshot.
 *
 * Threat: an argument object whose getter returns a harmless value to the
 * check and a dangerous one to the executor (time-of-check/time-of-use in
 * memory). Every later layer sees only the snapshot's primitive strings, which
 * cannot change, so what was checked is what runs.
 *
 * @module
 */

/** Longest command text accepted; longer input is refused before parsing. */
export const MAX_COMMAND_CHARS = 16_384;
/** Longest cwd text accepted. */
export const MAX_CWD_CHARS = 4_096;

export interface CommandInput {
  readonly command: string;
  readonly cwd: string | undefined;
}

export type SnapshotResult =
  | { readonly ok: true; readonly input: CommandInput }
  | { readonly ok: false; readonly reason: string };

/**
 * Copies `command` and `cwd` out of `raw`, reading each property once.
 *
 * @param raw The arguments as the transport delivered them.
 * @returns The frozen snapshot, or why the arguments are unusable.
 */
export function snapshotCommandInput(raw: unknown): SnapshotResult {
  if (raw === null || typeof raw !== "object") {
    return { ok: false, reason: "The arguments must be an object with a command string." };
  }
  const record = raw as Record<string, unknown>;
  // One read per property: the values are held in locals from here on.
  const command = record["command"];
  const cwd = record["cwd"];
  if (typeof command !== "string") {
    return { ok: false, reason: "The command must be a string." };
  }
  if (cwd !== undefined && typeof cwd !== "string") {
    return { ok: false, reason: "The cwd must be a string when given." };
  }
  if (command.length > MAX_COMMAND_CHARS) {
    return {
      ok: false,
      reason:
        `The command is ${command.length} characters long; the limit is ${MAX_COMMAND_CHARS}.`,
    };
  }
  if (cwd !== undefined && cwd.length > MAX_CWD_CHARS) {
    return {
      ok: false,
      reason: `The cwd is ${cwd.length} characters long; the limit is ${MAX_CWD_CHARS}.`,
    };
  }
  return { ok: true, input: Object.freeze({ command, cwd }) };
}
