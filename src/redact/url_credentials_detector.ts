/**
 * Passwords in URLs: `scheme://user:password@host` (RFC 3986 userinfo). Only
 * the password is hidden; the scheme, user and host stay, so
 * `postgres://app:[REDACTED:url_credentials]@db:5432/app` still says which
 * database was meant.
 *
 * @module
 */
import type { Detector, Emit, ScanInput } from "./types.ts";

const SEPARATOR = "://";
const MARKER = "[REDACTED:";
const COLON = 58;
const AT = 64;

/**
 * Characters that end the authority: `/ ? #`, whitespace, quotes and
 * brackets. `[` is IPv6 host syntax, never userinfo, and a marker starts
 * with it.
 */
const AUTHORITY_STOP = new Uint8Array(128);
for (const c of "/?#[]<>\"'` \t\r\n\v\f\\") AUTHORITY_STOP[c.charCodeAt(0)] = 1;

function isSchemeChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 43 ||
    c === 45 || c === 46;
}

/** @returns the detector for passwords in URL userinfo */
export function createUrlCredentialsDetector(): Detector {
  return {
    name: "url_credentials",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      let from = 0;
      for (let at = text.indexOf(SEPARATOR, from); at !== -1; at = text.indexOf(SEPARATOR, from)) {
        const authority = at + SEPARATOR.length;
        // The scan stops at `/`, and every `://` holds one, so no two scans
        // overlap: linear in the input.
        from = authority;
        if (at === 0 || !isSchemeChar(text.charCodeAt(at - 1))) continue;
        let colon = -1;
        let lastAt = -1;
        let i = authority;
        for (; i < text.length; i++) {
          const c = text.charCodeAt(i);
          if (c < 128 && AUTHORITY_STOP[c] === 1) break;
          if (c === COLON && colon === -1 && lastAt === -1) colon = i;
          // The last `@` ends the userinfo: a raw `@` in a password is common.
          if (c === AT) lastAt = i;
        }
        from = i;
        if (colon === -1 || lastAt === -1 || lastAt <= colon + 1) continue;
        if (text.startsWith(MARKER, colon + 1)) continue;
        emit(colon + 1, lastAt, "url_credentials");
      }
    },
  };
}
