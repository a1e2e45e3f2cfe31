/**
 * The approval form's anti-forgery token: minting, constant-time checking and
 * single use. See `transaction.ts` for why it exists beside the PIN.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { randomToken } from "../_http.ts";
import type { ExpiringMap } from "../_expiring_map.ts";
import type { AuthorizeTransaction } from "./transaction.ts";

/** A fresh form token: 32 random bytes, base64url. */
export function mintFormToken(): string {
  return randomToken(32);
}

/**
 * Whether `submitted` is the transaction's current token. Both sides are
 * hashed first, so neither their content nor their length shows in the
 * timing.
 */
export function formTokenMatches(
  submitted: string,
  txn: Pick<AuthorizeTransaction, "csrf">,
): boolean {
  const a = createHash("sha256").update(submitted, "utf8").digest();
  const b = createHash("sha256").update(txn.csrf, "utf8").digest();
  return timingSafeEqual(a, b) && submitted.length > 0;
}

/**
 * Replaces the transaction's token (after a post that did not end it), so
 * the token just used is never accepted again. Keeps the original expiry.
 *
 * @returns The transaction with its new token (to render the next page).
 */
export function rotateFormToken(
  transactions: ExpiringMap<string, AuthorizeTransaction>,
  txn: AuthorizeTransaction,
): AuthorizeTransaction {
  const next: AuthorizeTransaction = Object.freeze({ ...txn, csrf: mintFormToken() });
  transactions.set(txn.id, next, txn.expiresAt);
  return next;
}
