/**
 * PKCE (RFC 7636). The code challenge binds the authorization code to the
 * client instance that started the flow, so a code intercepted on its way
 * back through the browser is useless without the verifier.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";

/** RFC 7636 §4.1: 43-128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~". */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge is base64url(SHA-256): exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** True when `challenge` is well-formed for `method`. */
export function isWellFormedChallenge(challenge: string, method: "S256" | "plain"): boolean {
  return method === "S256" ? S256_CHALLENGE.test(challenge) : VERIFIER.test(challenge);
}

/**
 * RFC 7636 §4.6: recomputes the challenge from the verifier and compares.
 *
 * @example
 * ```ts
 * verifyPkce("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
 *   "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "S256"); // true
 * ```
 */
export function verifyPkce(verifier: string, challenge: string, method: "S256" | "plain"): boolean {
  if (!VERIFIER.test(verifier)) return false;
  const computed = method === "S256"
    ? createHash("sha256").update(verifier, "ascii").digest("base64url")
    : verifier;
  const a = createHash("sha256").update(computed).digest();
  const b = createHash("sha256").update(challenge).digest();
  return timingSafeEqual(a, b);
}
