/**
 * Allowlisted command names and their one-time resolution on the child PATH.
 *
 * Each name resolves once, at startup, to an absolute path; that path is what
 * runs and what Deno's `--allow-run` grants. Deno compares run grants by path
 * text, so the path keeps the PATH folder's spelling (`/usr/bin/ls`), and the
 * symlink-resolved `realPath` sits beside it for same-file comparisons.
 *
 * @module
 */
import type { ResolvedCommand } from "./types.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";

/**
 * A bare ASCII command name. No `/` (a path is not a name), no leading `-` or
 * `.` (never an option, never `.`/`..`), no shell characters: the tokenizer
 * refuses those anyway, so such a name could never match and is a mistake.
 */
const COMMAND_NAME = /^[A-Za-z0-9_+][A-Za-z0-9._+-]{0,254}$/;

/**
 * Checks one allow- or denylist entry.
 *
 * @returns the name, or a sentence naming `key`
 */
export function checkCommandName(name: string, key: string): Checked<string> {
  if (COMMAND_NAME.test(name)) return pass(name);
  if (name.includes("/")) {
    return fail(
      `Policy key "${key}" is ${
        quote(name)
      }, but commands are listed by bare name (for example "ls"), never by path.`,
    );
  }
  return fail(
    `Policy key "${key}" is ${
      quote(name)
    }, which is not a command name (ASCII letters, digits and . _ + -, not starting with "." or "-").`,
  );
}

/**
 * Walks `pathDirs` in order; the first regular file with an execute bit wins.
 *
 * A stat that fails for any reason means "not here", including `NotCapable`
 * and `PermissionDenied`: a server started under a narrow read grant must
 * resolve exactly as it did when the grant was generated, skipping folders it
 * may not look into.
 *
 * @returns the resolution, or a sentence naming `allowlist.commands`
 */
export async function resolveCommand(
  name: string,
  pathDirs: readonly string[],
): Promise<Checked<ResolvedCommand>> {
  for (const dir of pathDirs) {
    const path = dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(path);
    } catch {
      continue;
    }
    if (!info.isFile || ((info.mode ?? 0) & 0o111) === 0) continue;
    try {
      return pass(Object.freeze({ name, path, realPath: await Deno.realPath(path) }));
    } catch (error) {
      // Falling through to a later folder would silently pick another binary.
      const why = error instanceof Error ? error.message : String(error);
      return fail(
        `Policy key "allowlist.commands" lists ${quote(name)}, found at ${
          quote(path)
        }, whose real path cannot be read: ${why}.`,
      );
    }
  }
  return fail(
    `Policy key "allowlist.commands" lists ${
      quote(name)
    }, which is not an executable file in any folder of the child PATH ${
      quote(pathDirs.join(":"))
    }.`,
  );
}
