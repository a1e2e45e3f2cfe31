/**
 * The state directory holds the JWT secret, the approved clients and the
 * revocation list: whoever can write it can mint tokens or un-revoke a client.
 * It is created 0700 when missing and refused when others may write to it.
 * (The policy loader separately refuses a state_dir inside the jail.)
 *
 * @module
 */

export type StateDirResult = { readonly ok: true } | {
  readonly ok: false;
  readonly message: string;
};

/**
 * Creates `stateDir` with mode 0700 if it does not exist; checks an existing one.
 *
 * @param stateDir Absolute path.
 * @returns ok, or one sentence naming the problem.
 */
export async function ensureStateDir(stateDir: string): Promise<StateDirResult> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(stateDir);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      return { ok: false, message: `Cannot read the state directory "${stateDir}": ${error}.` };
    }
    try {
      await Deno.mkdir(stateDir, { recursive: true, mode: 0o700 });
      // mkdir's mode passes through the umask; set it explicitly.
      await Deno.chmod(stateDir, 0o700);
    } catch (mkdirError) {
      return {
        ok: false,
        message: `Cannot create the state directory "${stateDir}": ${mkdirError}.`,
      };
    }
    return { ok: true };
  }
  if (!info.isDirectory) {
    return { ok: false, message: `The state directory "${stateDir}" is not a directory.` };
  }
  if (info.mode !== null && (info.mode & 0o022) !== 0) {
    return {
      ok: false,
      message: `The state directory "${stateDir}" is writable by other users; run chmod 700 on it.`,
    };
  }
  return { ok: true };
}
