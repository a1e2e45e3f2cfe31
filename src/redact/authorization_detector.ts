/**
 * HTTP credentials: the value of an `Authorization` (or
 * `Proxy-Authorization`) header, and a `Bearer <token>` anywhere. The scheme
 * stays visible (`Authorization: Bearer [REDACTED:authorization]`), since it
 * tells the model what kind of credential was there without revealing it.
 *
 * @module
 */
import type { Detector, Emit, ScanInput } from "./types.ts";

/**
 * RFC 9110 §11.4 `credentials = auth-scheme [ 1*SP ( token68 / ... ) ]`;
 * token68 is `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
 * Blank runs are bounded, so the pattern stays linear.
 */
const HEADER =
  /(?<![A-Za-z0-9_-])(?:proxy-)?authorization["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?:([A-Za-z][A-Za-z0-9-]{0,20})[ \t]{1,8})?([A-Za-z0-9._~+/-]+=*)/gi;
/** `Bearer <token>` outside a header (`curl -H`, logs, client libraries' debug output). */
const BEARER = /(?<![A-Za-z0-9_-])bearer[ \t]{1,8}([A-Za-z0-9._~+/-]{16,}=*)/gi;
const HAS_DIGIT = /[0-9]/;
/** Without a scheme, a header value this short is prose ("Authorization: required"). */
const MIN_BARE_CREDENTIAL = 16;

/** @returns the detector for Authorization header values and bearer tokens */
export function createAuthorizationDetector(): Detector {
  const header = new RegExp(HEADER.source, "gi");
  const bearer = new RegExp(BEARER.source, "gi");
  return {
    name: "authorization",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      const lower = input.lower();
      const headerAt = lower.indexOf("authorization");
      if (headerAt !== -1) {
        header.lastIndex = Math.max(0, headerAt - 6);
        for (let m = header.exec(text); m !== null; m = header.exec(text)) {
          const credential = m[2] ?? "";
          if (m[1] === undefined && credential.length < MIN_BARE_CREDENTIAL) continue;
          const end = m.index + m[0].length;
          emit(end - credential.length, end, "authorization");
        }
      }
      const bearerAt = lower.indexOf("bearer");
      if (bearerAt !== -1) {
        bearer.lastIndex = bearerAt;
        for (let m = bearer.exec(text); m !== null; m = bearer.exec(text)) {
          const credential = m[1] ?? "";
          if (!HAS_DIGIT.test(credential)) continue;
          const end = m.index + m[0].length;
          emit(end - credential.length, end, "authorization");
        }
      }
    },
  };
}
