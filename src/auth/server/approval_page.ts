/**
 * The approval page the operator sees: who asks (the client's self-chosen
 * name, flagged as unverified), where the browser will go next (the redirect
 * host, the detail a phishing client cannot hide), and what it may do.
 *
 * @module
 */
import { formatScopes, SCOPE_DESCRIPTIONS, SCOPES } from "../scopes.ts";
import { escapeHtml, htmlResponse } from "./html.ts";
import type { AuthorizeTransaction } from "./transaction.ts";

/** What the page should say besides the request itself. */
export interface ApprovalPageOptions {
  readonly status: number;
  /** An error from a previous attempt (wrong PIN), shown above the form. */
  readonly error: string | null;
  /** False when no admin PIN is configured: approval is impossible, only deny. */
  readonly pinConfigured: boolean;
  readonly extraHeaders?: Readonly<Record<string, string>>;
}

/** Renders the approval page for `txn`. */
export function approvalPage(txn: AuthorizeTransaction, options: ApprovalPageOptions): Response {
  const redirect = new URL(txn.redirectUri);
  const name = txn.client.client_name ?? "(no name given)";
  const scopeItems = SCOPES.filter((s) => txn.scopes.has(s)).map((s) =>
    `<li><code>${escapeHtml(s)}</code>: ${escapeHtml(SCOPE_DESCRIPTIONS.get(s) ?? "")}</li>`
  ).join("");
  const execute = txn.scopes.has("shell:execute")
    ? `<p class="warn">This client asks to <strong>run commands</strong> on this machine within the policy.</p>`
    : "";
  const error = options.error === null ? "" : `<p class="err">${escapeHtml(options.error)}</p>`;
  const pinField = options.pinConfigured
    ? `<label>Admin PIN <input type="password" name="pin" autocomplete="off" required></label>
<button type="submit" name="decision" value="approve">Approve</button>`
    : `<p class="err">Approval is disabled: no admin PIN is configured. Set HTMCP_OAUTH_ADMIN_PIN (at least 8 characters, not a placeholder) in the server's environment and restart htmcp.</p>`;
  const body = `<h1>Allow an MCP client to use this server?</h1>
${error}
<dl>
<dt>Client name (chosen by the client itself, not verified)</dt><dd>${escapeHtml(name)}</dd>
<dt>Client ID</dt><dd><code>${escapeHtml(txn.client.client_id)}</code></dd>
<dt>After your decision the browser goes to</dt><dd><strong>${
    escapeHtml(redirect.host)
  }</strong><br><code>${escapeHtml(txn.redirectUri)}</code></dd>
<dt>Access to</dt><dd><code>${escapeHtml(txn.resource)}</code></dd>
<dt>Permissions (${escapeHtml(formatScopes(txn.scopes))})</dt><dd><ul>${scopeItems}</ul></dd>
</dl>
${execute}
<p>Approve only if you started this connection yourself and recognise the address above.</p>
<form method="post" action="/authorize">
<input type="hidden" name="txn" value="${escapeHtml(txn.id)}">
<input type="hidden" name="csrf" value="${escapeHtml(txn.csrf)}">
${pinField}
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</form>`;
  return htmlResponse(
    options.status,
    "Authorize MCP client",
    body,
    redirect.origin,
    options.extraHeaders ?? {},
  );
}
