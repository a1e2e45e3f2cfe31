/**
 * The admin PIN: the one secret that stands between a stranger who registered
 * a client and a token that runs commands. It must not be guessable, and its
 * comparison must not leak how many characters matched.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** Minimum PIN length in characters. */
export const MIN_PIN_LENGTH = 8;

/** Values people type when a form insists on a secret; refused in any case. */
const PLACEHOLDERS: ReadonlySet<string> = new Set([
  "changeme",
  "change-me",
  "change_me",
  "changeit",
  "password",
  "password1",
  "passw0rd",
  "p@ssw0rd",
  "letmein1",
  "qwertyui",
  "qwerty123",
  "asdfghjk",
  "iloveyou",
  "admin123",
  "administrator",
  "adminpin",
  "secret12",
  "12345678",
  "123456789",
  "1234567890",
  "87654321",
  "abcdefgh",
  "abcd1234",
  "htmcp123",
  "htmcpadmin",
  "example1",
  "xxxxxxxx",
]);

/**
 * Whether a PIN may guard approvals: a weak one is an expected outcome (a
 * value), which the settings turn into a refusal to start.
 */
export type PinStrength =
  | { readonly ok: true }
  | {
    readonly ok: false;
    /** One sentence for the operator naming `HTMCP_OAUTH_ADMIN_PIN` and what is wrong with it. */
    readonly message: string;
  };

/**
 * Refuses a PIN that is short, a known placeholder, one repeated character or
 * a run of consecutive characters (`23456789`, `hgfedcba`).
 *
 * @param pin The configured admin PIN (`HTMCP_OAUTH_ADMIN_PIN`).
 * @returns `{ ok: true }`, or the sentence saying why the PIN is too weak.
 *
 * @example
 * ```ts
 * import { checkPinStrength } from "./mod.ts";
 *
 * checkPinStrength("changeme").ok; // false
 * checkPinStrength("plum-7-harbor").ok; // true
 * ```
 */
export function checkPinStrength(pin: string): PinStrength {
  const chars = [...pin];
  if (chars.length < MIN_PIN_LENGTH) {
    return {
      ok: false,
      message:
        `HTMCP_OAUTH_ADMIN_PIN is ${chars.length} characters long; it must have at least ${MIN_PIN_LENGTH}.`,
    };
  }
  const lower = pin.toLowerCase();
  if (PLACEHOLDERS.has(lower) || isRepeatOrRun(chars)) {
    return {
      ok: false,
      message: "HTMCP_OAUTH_ADMIN_PIN is a placeholder or an easy sequence; choose a random one.",
    };
  }
  return { ok: true };
}

function isRepeatOrRun(chars: readonly string[]): boolean {
  const codes = chars.map((c) => c.toLowerCase().codePointAt(0) as number);
  for (const step of [0, 1, -1]) {
    if (codes.every((code, i) => i === 0 || code - (codes[i - 1] as number) === step)) return true;
  }
  return false;
}

/**
 * Compares a submitted PIN with the configured one in constant time: both are
 * hashed first, so the comparison never depends on their lengths either.
 */
export function pinMatches(submitted: string, expected: string): boolean {
  const a = createHash("sha256").update(submitted, "utf8").digest();
  const b = createHash("sha256").update(expected, "utf8").digest();
  return timingSafeEqual(a, b);
}
