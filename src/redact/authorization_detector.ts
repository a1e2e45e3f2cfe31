/**
 * HTTP credentials: the value of an `Authorization` (or
 * `Proxy-Authorization`) header, and a `Bearer <token>` anywhere. The scheme
 * stays visible (`Authorization: Bearer [REDACTED:authorization]`), since it
 * tells the model what kind of credential was there without revealing it.
 *
 * The header is found from `zation`/`ZATION` (a `z` is rare, so the search
 * is fast), then checked backwards for `authori` in any case; a sticky
 * regex reads the value at that one position.
 *
 * @module
 */
import type { Detector, Emit, ScanInput } from "./types.ts";

/**
 * RFC 9110 §11.4 `credentials = auth-scheme [ 1*SP ( token68 / ... ) ]`;
 * token68 is `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
 * Blank runs are bounded, so the pattern stays linear.
 */
const HEADER_VALUE =
  /["']?[ \t]{0,8}[:=][ \t]{0,8}["']?(?:([A-Za-z][A-Za-z0-9-]{0,20})[ \t]{1,8})?([A-Za-z0-9._~+/-]+=*)/y;
/** `Bearer <token>` outside a header (`curl -H`, logs, client libraries' debug output). */
const BEARER_VALUE = /[ \t]{1,8}([A-Za-z0-9._~+/-]{16,}=*)/y;
const HAS_DIGIT = /[0-9]/;
/** Without a scheme, a header value this short is prose ("Authorization: required"). */
const MIN_BARE_CREDENTIAL = 16;

const HEADER_ANCHORS = ["zation", "ZATION"];
const HEADER_HEAD = "authori";
const BEARER_WORDS = ["Bearer", "bearer", "BEARER"];
const WORD = /[A-Za-z0-9_]/;
const WORD_OR_DASH = /[A-Za-z0-9_-]/;

function eachIndex(text: string, needle: string, visit: (at: number) => void): void {
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    visit(at);
  }
}

/** @returns the detector for Authorization header values and bearer tokens */
export function createAuthorizationDetector(): Detector {
  const headerValue = new RegExp(HEADER_VALUE.source, "y");
  const bearerValue = new RegExp(BEARER_VALUE.source, "y");
  return {
    name: "authorization",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      for (const anchor of HEADER_ANCHORS) {
        eachIndex(text, anchor, (at) => {
          const start = at - HEADER_HEAD.length;
          if (start < 0 || text.slice(start, at).toLowerCase() !== HEADER_HEAD) return;
          if (start > 0 && WORD.test(text[start - 1] ?? "")) return;
          headerValue.lastIndex = at + anchor.length;
          const m = headerValue.exec(text);
          if (m === null) return;
          const credential = m[2] ?? "";
          if (m[1] === undefined && credential.length < MIN_BARE_CREDENTIAL) return;
          const end = m.index + m[0].length;
          emit(end - credential.length, end, "authorization");
        });
      }
      for (const word of BEARER_WORDS) {
        eachIndex(text, word, (at) => {
          if (at > 0 && WORD_OR_DASH.test(text[at - 1] ?? "")) return;
          bearerValue.lastIndex = at + word.length;
          const m = bearerValue.exec(text);
          const credential = m?.[1];
          if (m === null || credential === undefined || !HAS_DIGIT.test(credential)) return;
          const end = m.index + m[0].length;
          emit(end - credential.length, end, "authorization");
        });
      }
    },
  };
}
