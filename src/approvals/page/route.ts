/**
 * `GET|POST /approvals`: the operator's approval page for commands a
 * `decision = "prompt"` rule holds, on htmcp's own origin, behind the admin
 * PIN (`HTMCP_OAUTH_ADMIN_PIN`, the one that approves OAuth clients).
 *
 * Threats and answers:
 * - The model approving its own command: nothing here reads a bearer token
 *   or an MCP session. The only credential is the admin PIN, typed by a
 *   person; a token with every scope is worth nothing on this page.
 * - PIN guessing: the constant-time comparison and the failed-PIN limiter
 *   of the OAuth page, the same instance, so guesses on either page spend
 *   one budget (5 per address and 50 overall per 15 minutes).
 * - A forged or cross-site post: the page's own Origin only, Fetch Metadata
 *   (same-origin top-level navigation), and a form token only our page holds,
 *   used up by every post (forms.ts).
 * - Reading the queue: the list shows only after a correct PIN.
 * - Answering something other than what was shown: an unlocked page may
 *   answer only the ids it listed; the store refuses anything not pending
 *   or past its expiry, exactly as for `htmcp approvals allow|deny`.
 *
 * The answer goes through `ApprovalStore.answer`, as the CLI's does, with
 * `by = "pin_page:ADDR"`. The server's waiting call (or the caller's next
 * identical call) writes `approval_answered` for it, as for a CLI answer:
 * that record names the call and must come before the run's attempt record,
 * which only the call can order. The page itself audits what it saw happen
 * (`approval_page_answer` with the remote address, every refusal, wrong
 * PINs) through the server's one audit writer.
 *
 * @module
 */
import { mediaType, parseForm, readBodyLimited } from "../../auth/_http.ts";
import type { AuditSink } from "../../auth/audit_sink.ts";
import { messagePage } from "../../auth/server/html.ts";
import { checkPinStrength } from "../../auth/server/pin.ts";
import { checkAdminPin } from "../../auth/server/pin_gate.ts";
import type { FailureLimiter } from "../../auth/server/rate_limit.ts";
import { rateLimitedLog } from "../../auth/server/operator_log.ts";
import type { StateStore } from "../../state/mod.ts";
import type { ApprovalRecord } from "../records.ts";
import { ApprovalStore } from "../store.ts";
import { type BrowserRefusal, refuseGet, refusePost } from "./browser_checks.ts";
import { GRANT_TTL_MS, type PageForm, PageForms } from "./forms.ts";
import { listPage, type PageNote, unlockPage } from "./render.ts";

declare module "../../audit/mod.ts" {
  interface AuditEventFields {
    /** A request to the approval page refused before any answer (never a PIN or form token). */
    approval_page_refused: {
      /** `foreign_origin`, `cross_site_fetch`, `not_a_page`, `bad_form`, `unknown_form`, `bad_form_token`, `pin_required`, `not_listed`, `missing`, `expired`, or the state it was already in. */
      readonly reason: string;
      readonly approval_id: string | null;
      readonly remote_addr: string | null;
      /** The `Origin` header as sent, or null when absent. */
      readonly origin: string | null;
    };
    /** The operator answered an approval on the page (`approval_answered` follows from the call). */
    approval_page_answer: {
      readonly approval_id: string;
      readonly answer: string;
      readonly by: string;
      readonly remote_addr: string | null;
    };
  }
}

/** Options of {@linkcode createApprovalPage}. */
export interface ApprovalPageOptions {
  /** `HTMCP_OAUTH_ADMIN_PIN`, or null: then the page is not served. */
  readonly adminPin: string | null;
  /** The policy's state store, or null: then there are no approvals and no page. */
  readonly store: StateStore | null;
  /** The page's own origin (`[http] base_url`, or the bound origin). */
  readonly ownOrigin: string;
  /** The server's one audit writer: the page's refusals, wrong PINs and answers. */
  readonly audit: AuditSink;
  /** The OAuth page's failed-PIN limiter (one budget for one PIN). */
  readonly pinLimiter: FailureLimiter;
  /** Byte limit of a form post (`[http] max_registration_bytes`). */
  readonly maxBodyBytes: number;
  /** The clock form tokens and expiry are judged by; default `Date.now`. */
  readonly now?: () => number;
  /** Where refusals and answers are told to the operator; default stderr, rate-limited. */
  readonly operatorLog?: (line: string) => void;
}

/** The page's route: the request and the client's address. */
export type ApprovalPageRoute = (request: Request, remoteAddr: string) => Promise<Response>;

/**
 * What {@linkcode createApprovalPage} builds: the route (null when the page
 * must not exist), or why the server must not start.
 */
export type ApprovalPageSetup =
  | { readonly ok: true; readonly route: ApprovalPageRoute | null }
  | { readonly ok: false; readonly message: string };

/**
 * Builds the page, or null when it must not exist (no PIN or no state
 * store: the path then answers 404 like any other unknown path).
 *
 * @returns The route, or one sentence why the server must not start (a
 *   guessable PIN: this page would then be as weak as it).
 *
 * @example
 * ```ts
 * import { createApprovalPage } from "./mod.ts";
 * import type { AuditLog } from "../../audit/mod.ts";
 * import { DEFAULT_FAILURE_LIMITS, FailureLimiter } from "../../auth/server/mod.ts";
 * import { LocalStateStore } from "../../state/mod.ts";
 * declare const audit: AuditLog; // the server's one audit log
 * const page = createApprovalPage({
 *   adminPin: "plum-7-harbor",
 *   store: new LocalStateStore(await Deno.makeTempDir()),
 *   ownOrigin: "https://htmcp.example.org",
 *   audit,
 *   pinLimiter: new FailureLimiter(DEFAULT_FAILURE_LIMITS, Date.now), // the OAuth page's one
 *   maxBodyBytes: 16_384,
 * });
 * if (!page.ok) throw new Error(page.message); // a guessable PIN: the server does not start
 * const response = await page.route?.(
 *   new Request("https://htmcp.example.org/approvals"),
 *   "127.0.0.1",
 * ); // the PIN form
 * ```
 */
export function createApprovalPage(options: ApprovalPageOptions): ApprovalPageSetup {
  if (options.adminPin === null || options.store === null) return { ok: true, route: null };
  const strength = checkPinStrength(options.adminPin);
  if (!strength.ok) return { ok: false, message: strength.message };
  const deps: PageDeps = {
    pin: options.adminPin,
    approvals: new ApprovalStore(options.store, options.now),
    ownOrigin: options.ownOrigin,
    audit: options.audit,
    limiter: options.pinLimiter,
    maxBodyBytes: options.maxBodyBytes,
    now: options.now ?? Date.now,
    forms: new PageForms(options.now ?? Date.now),
    log: rateLimitedLog(options.operatorLog ?? ((line) => console.error(line)), Date.now),
  };
  return {
    ok: true,
    route: async (request, remoteAddr) => {
      if (request.method === "GET") return await handleGet(deps, request, remoteAddr);
      if (request.method === "POST") return await handlePost(deps, request, remoteAddr);
      return messagePage(405, "Method not allowed", "Use GET or POST.", { allow: "GET, POST" });
    },
  };
}

interface PageDeps {
  readonly pin: string;
  readonly approvals: ApprovalStore;
  readonly ownOrigin: string;
  /** The server's one audit writer: the page's refusals, wrong PINs and answers. */
  readonly audit: AuditSink;
  readonly limiter: FailureLimiter;
  readonly maxBodyBytes: number;
  readonly now: () => number;
  readonly forms: PageForms;
  readonly log: (line: string) => void;
}

async function handleGet(deps: PageDeps, request: Request, remoteAddr: string): Promise<Response> {
  const refused = refuseGet(request);
  if (refused !== null) return await refuseByHeaders(deps, request, remoteAddr, refused);
  return unlockPage(deps.forms.mintUnlock(), deps.ownOrigin, 200, null);
}

async function handlePost(deps: PageDeps, request: Request, remoteAddr: string): Promise<Response> {
  const refused = refusePost(request, deps.ownOrigin);
  if (refused !== null) return await refuseByHeaders(deps, request, remoteAddr, refused);
  const origin = request.headers.get("origin");
  const body = await readBodyLimited(request, deps.maxBodyBytes);
  if (!body.ok) return messagePage(413, "Request too large", "The approval form is too large.");
  const form = mediaType(request) === "application/x-www-form-urlencoded"
    ? parseForm(new TextDecoder().decode(body.bytes))
    : null;
  if (form === null || !form.ok) {
    await refuse(deps, remoteAddr, "bad_form", null, origin);
    return messagePage(400, "Bad approval form", "The approval form is not well-formed.");
  }
  const fields = form.params;
  const taken = deps.forms.take(fields.get("form") ?? "", fields.get("csrf") ?? "");
  if (!taken.ok) {
    await refuse(deps, remoteAddr, taken.reason, null, origin);
    return messagePage(
      403,
      "Forbidden",
      "This form is not the one this server showed (its form token is missing, wrong, expired or already used). Open the approvals page again.",
    );
  }
  const action = fields.get("action") ?? "";
  if (taken.form.kind === "unlock") {
    if (action !== "unlock") {
      // Only a correct PIN makes a page that can answer.
      await refuse(deps, remoteAddr, "pin_required", idOrNull(fields.get("id") ?? ""), origin);
      return unlockPage(deps.forms.mintUnlock(), deps.ownOrigin, 403, {
        text: "Enter the admin PIN first.",
        error: true,
      });
    }
    return await unlock(deps, fields.get("pin") ?? "", remoteAddr);
  }
  if (action !== "allow" && action !== "deny") {
    await refuse(deps, remoteAddr, "bad_form", null, origin);
    return await showList(deps, taken.form.expiresAt, 400, {
      text: "The answer must be allow or deny.",
      error: true,
    });
  }
  return await answer(deps, taken.form, fields.get("id") ?? "", action === "allow", remoteAddr);
}

/** Checks the PIN; a correct one shows the pending approvals. */
async function unlock(deps: PageDeps, pin: string, remoteAddr: string): Promise<Response> {
  const gate = await checkAdminPin({
    limiter: deps.limiter,
    typed: pin,
    expected: deps.pin,
    remoteAddr,
    clientId: null,
    audit: deps.audit,
    log: (what) => deps.log(`htmcp: approvals page refused from ${remoteAddr}: ${what}.`),
  });
  if (!gate.ok) {
    if (gate.reason === "rate_limited") return gate.response;
    return unlockPage(deps.forms.mintUnlock(), deps.ownOrigin, 403, {
      text: "The PIN is wrong.",
      error: true,
    });
  }
  return await showList(deps, deps.now() + GRANT_TTL_MS, 200, null);
}

/** Answers one listed approval through the store, as `htmcp approvals allow|deny` does. */
async function answer(
  deps: PageDeps,
  form: PageForm,
  id: string,
  allow: boolean,
  remoteAddr: string,
): Promise<Response> {
  if (!form.ids.has(id)) {
    await refuse(deps, remoteAddr, "not_listed", idOrNull(id), null);
    return await showList(deps, form.expiresAt, 404, {
      text: "There is no such approval on this page.",
      error: true,
    });
  }
  const by = `pin_page:${remoteAddr}`;
  const done = await deps.approvals.answer(id, allow, by);
  if (!done.ok) {
    await refuse(deps, remoteAddr, done.state, id, null);
    const [status, text] = done.state === "missing"
      ? [404, `Approval ${id} no longer exists.`]
      : done.state === "expired"
      ? [410, `Approval ${id} expired before it was answered; nothing ran.`]
      : [409, `Approval ${id} is already ${done.state}; it was not changed.`];
    return await showList(deps, form.expiresAt, status, { text, error: true });
  }
  const word = allow ? "allowed" : "denied";
  deps.log(`htmcp: approval ${id} ${word} on the approvals page from ${remoteAddr}.`);
  await deps.audit.writeEvent("approval_page_answer", {
    approval_id: id,
    answer: allow ? "allow" : "deny",
    by,
    remote_addr: remoteAddr,
  });
  const text = allow
    ? `Allowed ${
      JSON.stringify(done.record.argv)
    }: it runs once, for ${done.record.owner}, before it expires.`
    : `Denied ${JSON.stringify(done.record.argv)}: it will not run.`;
  return await showList(deps, form.expiresAt, 200, { text, error: false });
}

/** The unlocked page, with a fresh form for the approvals pending now. */
async function showList(
  deps: PageDeps,
  expiresAt: number,
  status: number,
  note: PageNote | null,
): Promise<Response> {
  const now = deps.now();
  if (expiresAt <= now) {
    return unlockPage(deps.forms.mintUnlock(), deps.ownOrigin, status, note);
  }
  const pending = (await deps.approvals.list()).filter((record: ApprovalRecord) =>
    record.state === "pending" && now < record.expires_ms
  );
  const form = deps.forms.mintGrant(pending.map((record) => record.id), expiresAt);
  return listPage(form, pending, deps.ownOrigin, now, status, note);
}

async function refuseByHeaders(
  deps: PageDeps,
  request: Request,
  remoteAddr: string,
  reason: BrowserRefusal,
): Promise<Response> {
  await refuse(deps, remoteAddr, reason, null, request.headers.get("origin"));
  return messagePage(
    403,
    "Forbidden",
    "The approvals page must be opened in a browser window and posted from its own page.",
  );
}

/** Audits a refusal and tells the operator (one line, never a PIN or token). */
async function refuse(
  deps: PageDeps,
  remoteAddr: string,
  reason: string,
  approvalId: string | null,
  origin: string | null,
): Promise<void> {
  deps.log(`htmcp: approvals page refused from ${remoteAddr}: ${reason}.`);
  await deps.audit.writeEvent("approval_page_refused", {
    reason,
    approval_id: approvalId,
    remote_addr: remoteAddr,
    origin,
  });
}

/** A posted id as the audit may keep it: only something shaped like an approval id. */
function idOrNull(text: string): string | null {
  return /^[0-9a-f]{32}$/.test(text) ? text : null;
}
