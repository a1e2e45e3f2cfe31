/**
 * Passwords in URLs: `scheme://user:password@host` (RFC 3986 userinfo). Only
 * the password is hidden; the scheme, user and host stay, so
 * `postgres://app:[REDACTED:url_credentials]@db:5432/app` still says which
 * database was meant.
 *
 * The search starts from `@`, which is rare in output, and reads backwards
 * over at most `MAX_USERINFO` characters to the `://`.
 *
 * @module
 */
import { table } from "./_ascii.ts";
import type { Detector, Emit, ScanInput } from "./types.ts";

/** Longest `user:password` read back from an `@`. */
const MAX_USERINFO = 1024;
const COLON = 58;
const SLASH = 47;
const AT = 64;

/**
 * Characters that cannot be in userinfo: `/ ? #`, whitespace, quotes and
 * brackets. `[` is IPv6 host syntax, never userinfo, and a marker starts
 * with it.
 */
const USERINFO_STOP = table("/?#[]<>\"'` \t\r\n\v\f\\");

function isSchemeChar(c: number | undefined): boolean {
  return c !== undefined &&
    ((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 43 ||
      c === 45 || c === 46);
}

/** @returns the detector for passwords in URL userinfo */
export function createUrlCredentialsDetector(): Detector {
  return {
    name: "url_credentials",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      if (text.indexOf("@") === -1) return;
      const bytes = input.bytes();
      // Several `@` can share one authority (`user:p@ss@host`). Each run of
      // userinfo characters is read once: the next `@` in the same run
      // reuses its start and its colon, which keeps hostile input (a megabyte
      // of `@`) linear.
      let runAt = -1;
      let runStart = -1;
      let runColon = -1;
      for (let at = text.indexOf("@"); at !== -1; at = text.indexOf("@", at + 1)) {
        let i = at - 1;
        while (i > runAt && USERINFO_STOP[bytes[i]!] === 0) i--;
        if (i === runAt && runAt !== -1) {
          runAt = at;
        } else {
          runAt = at;
          runStart = i + 1;
          runColon = -1;
          // The first `:` before any `@` splits user from password.
          for (let k = runStart; k < at && bytes[k] !== AT; k++) {
            if (bytes[k] === COLON) {
              runColon = k;
              break;
            }
          }
        }
        if (at - runStart > MAX_USERINFO || runColon === -1 || runColon + 1 >= at) continue;
        // The character before the userinfo must end `scheme://`.
        const s = runStart - 1;
        if (s < 3 || bytes[s] !== SLASH || bytes[s - 1] !== SLASH || bytes[s - 2] !== COLON) {
          continue;
        }
        if (!isSchemeChar(bytes[s - 3])) continue;
        if (input.markerEndAt(runColon + 1) !== -1) continue;
        emit(runColon + 1, at, "url_credentials");
      }
    },
  };
}
