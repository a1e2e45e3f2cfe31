/**
 * The admin PIN check every operator page goes through (the OAuth approval
 * and the approvals page): one failed-PIN limiter, one constant-time
 * comparison, one refusal for a locked-out address, the same audit events.
 * Kept in one place so the two pages cannot drift apart on what stops a
 * guesser.
 *
 * @module
 */
import type { AuditSink } from "../audit_sink.ts";
import { messagePage } from "./html.ts";
import { pinMatches } from "./pin.ts";
import type { FailureLimiter } from "./rate_limit.ts";

/** What one PIN entry came to. */
export type PinGateResult =
  | { readonly ok: true }
  /** Too many wrong PINs: answer with `response` (429 with Retry-After), whatever was typed. */
  | { readonly ok: false; readonly reason: "rate_limited"; readonly response: Response }
  /** A wrong PIN, counted against the address; the page renders its own 403. */
  | { readonly ok: false; readonly reason: "wrong_pin" };

/** Who typed the PIN, where it is checked against, and where refusals go. */
export interface PinGateInput {
  readonly limiter: FailureLimiter;
  readonly typed: string;
  readonly expected: string;
  readonly remoteAddr: string;
  /** The OAuth client being approved; null on the approvals page. */
  readonly clientId: string | null;
  readonly audit: AuditSink;
  /** Tells the operator, in the page's own words, what was refused (`what` has no period). */
  readonly log: (what: string) => void;
}

/**
 * Checks a typed admin PIN. A locked-out address is refused before the PIN
 * is compared (so a correct guess after the limit teaches nothing); a wrong
 * PIN is counted; a correct one clears the address's count.
 */
export async function checkAdminPin(input: PinGateInput): Promise<PinGateResult> {
  const { limiter, remoteAddr } = input;
  const limit = limiter.check(remoteAddr);
  if (limit.blocked) {
    input.log("too many wrong PINs");
    await input.audit.writeEvent("pin_rate_limited", {
      client_id: input.clientId,
      remote_addr: remoteAddr,
      limit: limit.scope,
      retry_after_s: limit.retryAfterSeconds,
    });
    return {
      ok: false,
      reason: "rate_limited",
      response: messagePage(
        429,
        "Too many wrong PINs",
        `Too many wrong PINs were entered; try again in ${limit.retryAfterSeconds} seconds.`,
        { "retry-after": String(limit.retryAfterSeconds) },
      ),
    };
  }
  if (!pinMatches(input.typed, input.expected)) {
    const failures = limiter.recordFailure(remoteAddr);
    input.log(`wrong PIN (${failures} from this address)`);
    await input.audit.writeEvent("pin_failed", {
      client_id: input.clientId,
      remote_addr: remoteAddr,
      failures,
    });
    return { ok: false, reason: "wrong_pin" };
  }
  limiter.reset(remoteAddr);
  return { ok: true };
}
