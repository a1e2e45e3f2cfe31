/**
 * The approval page's HTML: the PIN form, and the list of pending approvals
 * with Allow and Deny for each. Built on the OAuth page's `htmlResponse`, so
 * both share one set of browser rules: everything reflected escaped, no
 * script, our one inline style by hash, `form-action` only to ourselves,
 * `frame-ancestors 'none'`, `X-Frame-Options: DENY`, `no-store`, and the
 * `same-origin` referrer policy under which Chromium sends our Origin on our
 * own posts.
 *
 * @module
 */
import { escapeHtml, htmlResponse } from "../../auth/server/html.ts";
import type { ApprovalRecord } from "../records.ts";
import type { PageForm } from "./forms.ts";
import { hiddenWordCount } from "../../redact/mod.ts";
import { visibleText } from "../../encoding/mod.ts";

/** The page's path on htmcp's origin. */
export const APPROVAL_PAGE_PATH = "/approvals";

/** A line above the form: an outcome or an error. */
export interface PageNote {
  readonly text: string;
  readonly error: boolean;
}

/** The PIN form. */
export function unlockPage(
  form: PageForm,
  ownOrigin: string,
  status: number,
  note: PageNote | null,
): Response {
  const body = `<h1>Pending command approvals</h1>
${noteHtml(note)}
<p>Commands a <code>decision = "prompt"</code> rule holds wait here for an operator. Enter the admin PIN to see them.</p>
<form method="post" action="${APPROVAL_PAGE_PATH}">
${hidden(form)}
<label>Admin PIN <input type="password" name="pin" autocomplete="off" required></label>
<button type="submit" name="action" value="unlock">Show pending approvals</button>
</form>`;
  return htmlResponse(status, "Command approvals", body, ownOrigin);
}

/** The pending approvals, each with its own Allow and Deny (all posting `form`). */
export function listPage(
  form: PageForm,
  records: readonly ApprovalRecord[],
  ownOrigin: string,
  now: number,
  status: number,
  note: PageNote | null,
): Response {
  const items = records.length === 0
    ? `<p>No command is waiting for approval.</p>`
    : records.map((record) => approvalHtml(record, form, now)).join("\n");
  const body = `<h1>Pending command approvals</h1>
${noteHtml(note)}
<p>Allow runs the command <strong>once</strong>, for the caller that asked, in the folder shown. Allow only what you expected.</p>
${items}
<form method="get" action="${APPROVAL_PAGE_PATH}"><button type="submit">Lock (enter the PIN again)</button></form>`;
  return htmlResponse(status, "Command approvals", body, ownOrigin);
}

function approvalHtml(record: ApprovalRecord, form: PageForm, now: number): string {
  const seconds = Math.max(0, Math.floor((record.expires_ms - now) / 1000));
  const text = record.command_raw === record.argv.join(" ")
    ? ""
    : `<dt>Command text</dt><dd><code>${escapeHtml(visibleText(record.command_raw))}</code></dd>`;
  // The argv as JSON: every word's bounds and any control character visible.
  // The record keeps it redacted (the state store is durable); when a word
  // was hidden, the operator is told the shown argv is not all that runs.
  const hiddenWords = hiddenWordCount(record.argv);
  const label = hiddenWords === 0
    ? "Command (exact argv)"
    : `Command (argv, <strong>${hiddenWords} word(s) hidden by the redactor</strong>: what runs holds text not shown here; deny unless you know what it is)`;
  return `<section class="warn" id="approval-${escapeHtml(record.id)}">
<dl>
<dt>${label}</dt><dd><code>${escapeHtml(JSON.stringify(record.argv))}</code></dd>
${text}${stdinHtml(record)}
<dt>Working folder (in the jail)</dt><dd><code>${escapeHtml(visibleText(record.cwd))}</code></dd>
<dt>Caller</dt><dd><code>${escapeHtml(record.owner)}</code></dd>
<dt>Rule</dt><dd><code>${escapeHtml(record.rule)}</code></dd>
<dt>Why the policy asks</dt><dd>${escapeHtml(record.justification)}</dd>
<dt>Expires</dt><dd>${escapeHtml(new Date(record.expires_ms).toISOString())} (in ${seconds} s)</dd>
<dt>Approval id</dt><dd><code>${escapeHtml(record.id)}</code></dd>
</dl>
<form method="post" action="${APPROVAL_PAGE_PATH}">
${hidden(form)}
<input type="hidden" name="id" value="${escapeHtml(record.id)}">
<button type="submit" name="action" value="allow">Allow once</button>
<button type="submit" name="action" value="deny">Deny</button>
</form>
</section>`;
}

/** The call's standard input, when it gave one: what runs reads all of it. */
function stdinHtml(record: ApprovalRecord): string {
  if (record.stdin === undefined) return "";
  return `<dt>Standard input (${record.stdin.bytes} bytes; its start, redacted)</dt><dd><code>${
    escapeHtml(visibleText(JSON.stringify(record.stdin.preview)))
  }</code></dd>`;
}

function hidden(form: PageForm): string {
  return `<input type="hidden" name="form" value="${escapeHtml(form.id)}">
<input type="hidden" name="csrf" value="${escapeHtml(form.csrf)}">`;
}

function noteHtml(note: PageNote | null): string {
  if (note === null) return "";
  return `<p class="${note.error ? "err" : "warn"}">${escapeHtml(note.text)}</p>`;
}
