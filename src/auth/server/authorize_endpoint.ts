/**
 * `/authorize`: `GET` validates the request and shows the approval page;
 * `POST` is the operator's decision on that page (fields `txn`, `pin`,
 * `decision`). Approval needs the admin PIN, compared in constant time,
 * failures throttled per address and audited. The redirect carries `code`,
 * `state` and `iss`.
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
import { pinMatches } from "./pin.ts";
import { redirectTo } from "./redirect.ts";
import { type AuthorizeTransaction, TRANSACTION_TTL_MS } from "./transaction.ts";

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
  const txn: AuthorizeTransaction = Object.freeze({
    id: randomToken(32),
    client: p.client,
    redirectUri: p.redirectUri,
    codeChallenge: p.codeChallenge,
    codeChallengeMethod: p.codeChallengeMethod,
    state: p.state,
    resource: p.resource,
    scopes: p.scopes,
  });
  if (!deps.transactions.set(txn.id, txn, deps.now() + TRANSACTION_TTL_MS)) {
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
  // Defence in depth against cross-site posts of the form (the PIN is the
  // real barrier, and the transport checks Origin too): a browser always
  // sends Origin on a form POST, and ours comes from our own page.
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== deps.settings.issuer) {
    return messagePage(
      403,
      "Forbidden",
      "The approval form must be posted from this server's own page.",
    );
  }
  const body = await readBodyLimited(request, deps.settings.maxBodyBytes);
  if (!body.ok) return messagePage(413, "Request too large", "The approval form is too large.");
  if (mediaType(request) !== "application/x-www-form-urlencoded") {
    return messagePage(400, "Bad approval form", "The approval form must be form-encoded.");
  }
  const form = parseForm(new TextDecoder().decode(body.bytes));
  if (!form.ok) {
    return messagePage(
      400,
      "Bad approval form",
      `The field "${form.duplicate}" is given more than once.`,
    );
  }
  const txnId = form.params.get("txn") ?? "";
  const txn = deps.transactions.get(txnId);
  if (txn === undefined) {
    return messagePage(
      400,
      "This approval has expired",
      "This approval request has expired or was already used. Start the connection again from your MCP client.",
    );
  }
  const decision = form.params.get("decision") ?? "approve";
  if (decision === "deny") {
    deps.transactions.delete(txnId);
    await deps.audit.writeEvent("authorization_denied", {
      client_id: txn.client.client_id,
      remote_addr: info.remoteAddr,
    });
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
  const limit = deps.pinLimiter.check(info.remoteAddr);
  if (limit.blocked) {
    await deps.audit.writeEvent("pin_rate_limited", {
      client_id: txn.client.client_id,
      remote_addr: info.remoteAddr,
      limit: limit.scope,
      retry_after_s: limit.retryAfterSeconds,
    });
    return messagePage(
      429,
      "Too many wrong PINs",
      `Too many wrong PINs were entered; try again in ${limit.retryAfterSeconds} seconds.`,
      { "retry-after": String(limit.retryAfterSeconds) },
    );
  }
  if (!pinMatches(form.params.get("pin") ?? "", expectedPin)) {
    const attempts = deps.pinLimiter.recordFailure(info.remoteAddr);
    await deps.audit.writeEvent("pin_failed", {
      client_id: txn.client.client_id,
      remote_addr: info.remoteAddr,
      failures: attempts,
    });
    return approvalPage(txn, { status: 403, error: "The PIN is wrong.", pinConfigured: true });
  }
  deps.pinLimiter.reset(info.remoteAddr);
  // Claim the transaction before any await, so two concurrent posts of the
  // same form cannot both get a code.
  if (deps.transactions.take(txnId) === undefined) {
    return messagePage(400, "This approval has expired", "This approval request was already used.");
  }
  return await approve(deps, txn);
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
