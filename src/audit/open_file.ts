/**
 * Opens the audit log without following a symbolic link, and says which file
 * (device and inode) is open.
 *
 * Threat answered: the log lives outside the jail, but its folder may be
 * writable by others than htmcp (a shared `/var/log`, a mistaken mode). A
 * symlink planted at the log's path must not make htmcp append its records,
 * or create a file, wherever the link points. `Deno.open` has no
 * `O_NOFOLLOW`, so the path is `lstat`ed first and the opened descriptor's
 * device and inode are compared with it: a link swapped in between the two
 * steps is caught because the descriptor then names the link's target. A
 * missing log is created with `createNew` (`O_CREAT|O_EXCL`), which never
 * follows a symlink (POSIX: it fails with `EEXIST` on one), so no file can be
 * created through a dangling link.
 *
 * @module
 */

/** An open log file and its identity on disk. */
export interface LogFile {
  readonly file: Deno.FsFile;
  readonly dev: number;
  readonly ino: number;
}

/** The opened file, or the sentence saying why not. */
export type OpenLogResult =
  | { readonly ok: true; readonly log: LogFile; readonly created: boolean }
  | { readonly ok: false; readonly reason: string; readonly missingFolder: boolean };

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Device and inode of `info`, or null when the platform does not report them. */
export function identityOf(info: Deno.FileInfo): { dev: number; ino: number } | null {
  return info.ino === null ? null : { dev: info.dev, ino: info.ino };
}

/** Whether `info` is the file `log` has open. */
export function isSameFile(info: Deno.FileInfo, log: LogFile): boolean {
  return info.dev === log.dev && info.ino === log.ino;
}

/**
 * `lstat` of `path`; null when nothing is there.
 *
 * @throws whatever `Deno.lstat` throws other than NotFound
 */
export async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** `lstatOrNull`, synchronous: for the check before every append (see `examineLog`). */
export function lstatOrNullSync(path: string): Deno.FileInfo | null {
  try {
    return Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/**
 * Opens `path` readable and for appending, creating it with mode 0600 when
 * missing, never through a symlink.
 *
 * @param path the log's absolute path
 * @returns the open file with its device and inode, or why it could not be opened
 */
export async function openLogFile(path: string): Promise<OpenLogResult> {
  const fail = (error: unknown, missingFolder = false): OpenLogResult => ({
    ok: false,
    reason: `Cannot open the audit log "${path}": ${messageOf(error)}.`,
    missingFolder,
  });
  // Two tries: a file created by someone else between lstat and createNew
  // (EEXIST) is opened as an existing file on the second.
  for (let attempt = 0; attempt < 2; attempt++) {
    let before: Deno.FileInfo | null;
    try {
      before = await lstatOrNull(path);
    } catch (error) {
      return fail(error);
    }
    if (before?.isSymlink) {
      return fail("it is a symbolic link, and htmcp never follows one to write its log");
    }
    let file: Deno.FsFile;
    try {
      file = before === null
        ? await Deno.open(path, { read: true, append: true, createNew: true, mode: 0o600 })
        : await Deno.open(path, { read: true, append: true });
    } catch (error) {
      if (before === null && error instanceof Deno.errors.AlreadyExists) continue;
      return fail(error, before === null && error instanceof Deno.errors.NotFound);
    }
    try {
      const opened = await file.stat();
      const after = before ?? await Deno.lstat(path);
      const identity = identityOf(opened);
      if (identity === null || after.dev !== identity.dev || after.ino !== opened.ino) {
        file.close();
        return fail(
          "the file at that path changed while it was being opened (a symbolic link or another file was swapped in)",
        );
      }
      return { ok: true, log: { file, ...identity }, created: before === null };
    } catch (error) {
      file.close();
      return fail(error);
    }
  }
  return fail("it was created and removed again while htmcp tried to open it");
}
