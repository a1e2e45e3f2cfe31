/**
 * `/authorize`: `GET` validates the request and shows the approval page;
 * `POST` is the operator's decision on that page (fields `txn`, `csrf`,
 * `pin`, `decision`). Every post must return the page's form token; approval
 * also needs the admin PIN, both compared in constant time, PIN failures
 * throttled per address. Every refused post is audited and printed on stderr
 * for the operator (one line, never a PIN or token). The redirect carries
 * `code`, `state` and `iss`.
 *
 * @module
 */
import { mediaType, parseForm, randomToken, readBodyLimited } from "../_http.ts";
import { writeAudit } from "../audit_sink.ts";
import { scopeList } from "../scopes.ts";
import { approvalPage } from "./approval_page.ts";
import { checkAuthorizeRequest } from "./authorize_request.ts";
import { findClient, type RequestInfo, type ServerDeps } from "./deps.ts";
import { messagePage } from "./html.ts";
import { checkAdminPin } from "./pin_gate.ts";
import { redirectTo } from "./redirect.ts";
import { type AuthorizeTransaction, TRANSACTION_TTL_MS } from "./transaction.ts";
import { formTokenMatches, mintFormToken, rotateFormToken } from "./form_token.ts";

/** Handles `GET /authorize`. */
export async function handleAuthorizeGet(deps: ServerDeps, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const check = await checkAuthorizeRequest(deps, url);
  if (!check.ok) {
    const refusal = check.refusal;
    if (refusal.to === "page") {
      return messagePage(
        400,
        "This authorization request cannot be used",
        `${refusal.error}: ${refusal.description}`,
      );
    }
    return redirectTo(302, refusal.redirectUri, {
      error: refusal.error,
      error_description: refusal.description,
      state: refusal.state,
    }, deps.settings.issuer);
  }
  const p = check.params;
  const expiresAt = deps.now() + TRANSACTION_TTL_MS;
  const txn: AuthorizeTransaction = Object.freeze({
    id: randomToken(32),
    client: p.client,
    redirectUri: p.redirectUri,
    codeChallenge: p.codeChallenge,
    codeChallengeMethod: p.codeChallengeMethod,
    state: p.state,
    resource: p.resource,
    scopes: p.scopes,
    csrf: mintFormToken(),
    expiresAt,
  });
  if (!deps.transactions.set(txn.id, txn, expiresAt)) {
    return messagePage(
      503,
      "Too many pending approvals",
      "Too many approval pages are open; try again in a few minutes.",
      {
        "retry-after": "60",
      },
    );
  }
  return approvalPage(txn, {
    status: 200,
    error: null,
    pinConfigured: deps.settings.adminPin !== null,
  });
}

/** Handles `POST /authorize` (the approval form). */
export async function handleAuthorizePost(
  deps: ServerDeps,
  request: Request,
  info: RequestInfo,
): Promise<Response> {
  // A browser sends Origin on a form POST: ours (same-origin referrer
  // policy), or `null` under stricter privacy settings. A foreign origin is a
  // cross-site post and is refused outright; `null` or no header at all (a
  // non-browser) is judged by the form token below, never by the header.
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== "null" && origin !== deps.settings.issuer) {
    await refuseApproval(deps, info, "foreign_origin", null, origin);
    return messagePage(
      403,
      "Forbidden",
      "The approval form must be posted from this server's own page.",
    );
  }
  const body = await readBodyLimited(request, deps.settings.maxBodyBytes);
  if (!body.ok) return messagePage(413, "Request too large", "The approval form is too large.");
  if (mediaType(request) !== "application/x-www-form-urlencoded") {
    await refuseApproval(deps, info, "bad_form", null, origin);
    return messagePage(400, "Bad approval form", "The approval form must be form-encoded.");
  }
  const form = parseForm(new TextDecoder().decode(body.bytes));
  if (!form.ok) {
    await refuseApproval(deps, info, "bad_form", null, origin);
    return messagePage(
      400,
      "Bad approval form",
      `The field "${form.duplicate}" is given more than once.`,
    );
  }
  const txnId = form.params.get("txn") ?? "";
  const found = deps.transactions.get(txnId);
  if (found === undefined) {
    await refuseApproval(deps, info, "expired", null, origin);
    return messagePage(
      400,
      "This approval has expired",
      "This approval request has expired or was already used. Start the connection again from your MCP client.",
    );
  }
  if (!formTokenMatches(form.params.get("csrf") ?? "", found)) {
    // The transaction stays open for the real page, whose token is unchanged.
    await refuseApproval(deps, info, "bad_form_token", found, origin);
    return messagePage(
      403,
      "Forbidden",
      "The approval form is not the one this server showed (its form token is missing, wrong or already used). Reload the approval page from your MCP client's link.",
    );
  }
  // The token is used now: any later post needs the next page's token.
  const txn = rotateFormToken(deps.transactions, found);
  const decision = form.params.get("decision") ?? "approve";
  if (decision === "deny") {
    deps.transactions.delete(txnId);
    deps.operatorLog(
      `htmcp: approval denied by the operator for client ${
        describeClient(txn)
      } (from ${info.remoteAddr}).`,
    );
    await deps.audit.writeEvent("authorization_denied", {
      client_id: txn.client.client_id,
      remote_addr: info.remoteAddr,
    });
    // Denying needs no PIN, so a client the operator never approved must
    // not be sent back to its self-asserted address either (no open
    // redirector, RFC 9700 §4.11.2): the denial is shown here.
    const known = await findClient(deps, txn.client.client_id);
    if (known === null || !known.approved) {
      return messagePage(
        200,
        "Request denied",
        "The request was denied. This client is not approved, so you are not sent back to it; you may close this page.",
      );
    }
    return redirectTo(303, txn.redirectUri, {
      error: "access_denied",
      error_description: "The operator denied the request.",
      state: txn.state,
    }, deps.settings.issuer);
  }
  if (decision !== "approve") {
    return messagePage(400, "Bad approval form", "The decision must be approve or deny.");
  }
  const expectedPin = deps.settings.adminPin;
  if (expectedPin === null) {
    return approvalPage(txn, { status: 403, error: "Approval is disabled.", pinConfigured: false });
  }
  const gate = await checkAdminPin({
    limiter: deps.pinLimiter,
    typed: form.params.get("pin") ?? "",
    expected: expectedPin,
    remoteAddr: info.remoteAddr,
    clientId: txn.client.client_id,
    audit: deps.audit,
    log: (what) => deps.operatorLog(operatorLine(info, what, txn)),
  });
  if (!gate.ok) {
    if (gate.reason === "rate_limited") return gate.response;
    return approvalPage(txn, { status: 403, error: "The PIN is wrong.", pinConfigured: true });
  }
  // Claim the transaction before any await, so two concurrent posts of the
  // same form cannot both get a code.
  if (deps.transactions.take(txnId) === undefined) {
    return messagePage(400, "This approval has expired", "This approval request was already used.");
  }
  return await approve(deps, txn);
}

/** Why an approval post was refused before the PIN was looked at. */
type ApprovalRefusal = "foreign_origin" | "bad_form" | "expired" | "bad_form_token";

const REFUSAL_WORDS: Readonly<Record<ApprovalRefusal, string>> = {
  foreign_origin: "posted from another site",
  bad_form: "not a well-formed approval form",
  expired: "unknown or expired approval request",
  bad_form_token: "missing, wrong or reused form token",
};

/**
 * Audits a refused approval post and tells the operator on stderr: the
 * browser shows the refusal to whoever posted, but the operator running the
 * server must see that someone tried (and a failed real approval must not be
 * a silent mystery).
 */
async function refuseApproval(
  deps: ServerDeps,
  info: RequestInfo,
  reason: ApprovalRefusal,
  txn: AuthorizeTransaction | null,
  origin: string | null,
): Promise<void> {
  const shownOrigin = origin === null ? "" : `, Origin ${printable(origin, 80)}`;
  deps.operatorLog(operatorLine(info, `${REFUSAL_WORDS[reason]}${shownOrigin}`, txn));
  await deps.audit.writeEvent("approval_refused", {
    reason,
    client_id: txn?.client.client_id ?? null,
    remote_addr: info.remoteAddr,
    origin,
  });
}

/** One stderr line: what was refused, from where, for which client. Never a PIN or token. */
function operatorLine(info: RequestInfo, what: string, txn: AuthorizeTransaction | null): string {
  const client = txn === null ? "" : ` for client ${describeClient(txn)}`;
  return `htmcp: approval refused from ${info.remoteAddr}${client}: ${what}.`;
}

/** The client's self-chosen name (made printable: it is the client's text) and id. */
function describeClient(txn: AuthorizeTransaction): string {
  const name = txn.client.client_name;
  const shown = name === undefined || name === null ? "" : `"${printable(name, 60)}" `;
  return `${shown}(${txn.client.client_id})`;
}

/** `text` with everything but printable ASCII replaced, cut to `max` characters. */
function printable(text: string, max: number): string {
  const clean = text.replace(/[^\x20-\x7e]/g, "?");
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}

async function approve(
  deps: ServerDeps,
  txn: AuthorizeTransaction,
): Promise<Response> {
  const failClosed = deps.settings.auditFailClosed;
  const known = await findClient(deps, txn.client.client_id);
  if (known === null) {
    return messagePage(
      400,
      "Client unknown",
      "This client was revoked or its registration expired; start again.",
    );
  }
  const nowMs = deps.now();
  if (!known.approved) {
    // First approval: the registration becomes persistent only now.
    const persistedOk = await writeAudit(deps.audit, failClosed, "client_persisted", {
      client_id: known.client.client_id,
      client_name: known.client.client_name ?? "",
      redirect_uris: known.client.redirect_uris,
    });
    if (!persistedOk) return auditUnavailable();
    await deps.registry.recordApproval({ ...known.client, approved_at: Math.floor(nowMs / 1000) });
    deps.pending.delete(known.client.client_id);
  }
  const approvedOk = await writeAudit(deps.audit, failClosed, "client_approved", {
    client_id: txn.client.client_id,
    scopes: scopeList(txn.scopes),
  });
  if (!approvedOk) return auditUnavailable();
  const code = deps.codes.issue({
    clientId: txn.client.client_id,
    redirectUri: txn.redirectUri,
    codeChallenge: txn.codeChallenge,
    codeChallengeMethod: txn.codeChallengeMethod,
    resource: txn.resource,
    scopes: txn.scopes,
  });
  if (code === null) {
    return messagePage(
      503,
      "Busy",
      "Too many authorization codes are outstanding; try again in a minute.",
    );
  }
  const issuedOk = await writeAudit(deps.audit, failClosed, "code_issued", {
    client_id: txn.client.client_id,
    scopes: scopeList(txn.scopes),
  });
  if (!issuedOk) {
    deps.codes.discard(code);
    return auditUnavailable();
  }
  return redirectTo(303, txn.redirectUri, { code, state: txn.state }, deps.settings.issuer);
}

function auditUnavailable(): Response {
  return messagePage(
    500,
    "Audit log unavailable",
    "The audit log cannot be written, so no authorization was issued.",
  );
}
