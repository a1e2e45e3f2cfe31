/**
 * The approval page's forms, kept on the server. Each rendered page carries a
 * public form id and a secret form token (`csrf`) that only that page holds;
 * a post must return both, the token compared in constant time, and every
 * post that passes the check uses the token up (the next page gets a new
 * one). So a forged form (no token), a replayed one (a used token) or a post
 * from another site (which cannot read our page) never reaches the PIN or the
 * store.
 *
 * Two kinds of form:
 *
 * - `unlock`: the PIN form anyone reaching the origin may fetch. It shows
 *   nothing of the queue: pending commands are the operator's business.
 * - `grant`: minted only after a correct PIN, it lists the pending approvals
 *   and may answer exactly those ids (what the operator saw), until
 *   `GRANT_TTL_MS` after the PIN was entered, however often it is rotated.
 *
 * Both tables are bounded and evict their oldest entry when full: an
 * anonymous flood of page loads can at worst make the operator reload, never
 * fill memory or lock the page.
 *
 * @module
 */
import { ExpiringMap } from "../../auth/_expiring_map.ts";
import { randomToken } from "../../auth/_http.ts";
import { formTokenMatches, mintFormToken } from "../../auth/server/form_token.ts";

/** How long a PIN form stays usable. */
export const UNLOCK_TTL_MS = 10 * 60_000;
/** How long a correct PIN lets the operator answer without entering it again. */
export const GRANT_TTL_MS = 5 * 60_000;
/** Most PIN forms held at once (oldest evicted). */
export const MAX_UNLOCK_FORMS = 256;
/** Most unlocked pages held at once (oldest evicted). */
export const MAX_GRANT_FORMS = 32;

/** One rendered form. */
export interface PageForm {
  readonly id: string;
  readonly kind: "unlock" | "grant";
  /** The form token of the page rendered last for this form. */
  readonly csrf: string;
  /** The approval ids a grant may answer (empty for `unlock`). */
  readonly ids: ReadonlySet<string>;
  readonly expiresAt: number;
}

/** The result of checking a posted form. */
export type FormCheck =
  | { readonly ok: true; readonly form: PageForm }
  | { readonly ok: false; readonly reason: "unknown_form" | "bad_form_token" };

/** The live forms of one server. */
export class PageForms {
  readonly #now: () => number;
  readonly #unlock: ExpiringMap<string, PageForm>;
  readonly #grant: ExpiringMap<string, PageForm>;

  constructor(now: () => number) {
    this.#now = now;
    this.#unlock = new ExpiringMap(MAX_UNLOCK_FORMS, "evict-oldest", now);
    this.#grant = new ExpiringMap(MAX_GRANT_FORMS, "evict-oldest", now);
  }

  /** A new PIN form. */
  mintUnlock(): PageForm {
    return this.#put({
      id: randomToken(16),
      kind: "unlock",
      csrf: mintFormToken(),
      ids: new Set(),
      expiresAt: this.#now() + UNLOCK_TTL_MS,
    });
  }

  /**
   * A new unlocked page for `ids`. `expiresAt` is kept from the grant being
   * rotated, so answering never extends what one PIN entry allows.
   */
  mintGrant(ids: Iterable<string>, expiresAt: number = this.#now() + GRANT_TTL_MS): PageForm {
    return this.#put({
      id: randomToken(16),
      kind: "grant",
      csrf: mintFormToken(),
      ids: new Set(ids),
      expiresAt,
    });
  }

  /**
   * Checks a post's form id and token, and on success uses the form up
   * before returning (no await in between), so of two concurrent posts of
   * one page only one passes. A wrong token leaves the form alone: the real
   * page keeps working after a forgery attempt.
   */
  take(formId: string, csrf: string): FormCheck {
    const table = this.#unlock.get(formId) !== undefined ? this.#unlock : this.#grant;
    const form = table.get(formId);
    if (form === undefined) return { ok: false, reason: "unknown_form" };
    if (!formTokenMatches(csrf, form)) return { ok: false, reason: "bad_form_token" };
    table.delete(formId);
    return { ok: true, form };
  }

  #put(form: PageForm): PageForm {
    const frozen = Object.freeze(form);
    (form.kind === "unlock" ? this.#unlock : this.#grant).set(form.id, frozen, form.expiresAt);
    return frozen;
  }
}
