/**
 * HTML for the approval and error pages. Everything reflected is escaped;
 * the page loads nothing external; the CSP allows exactly our one inline
 * style (by hash), no script, no framing, and form posts only to ourselves
 * and to the client's redirect origin (Chrome applies `form-action` to the
 * redirect that follows a form post).
 *
 * The referrer policy is `same-origin`: with `no-referrer` Chromium posts our
 * own form with `Origin: null`, which an Origin check must refuse. With
 * `same-origin` the browser sends our origin on our own form post and no
 * referrer at all to any other site (the client's redirect target never sees
 * the approval URL).
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Escapes text for an HTML element body or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;").replaceAll("'", "&#39;");
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f4f5;color:#18181b}` +
  `main{max-width:36rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:8px;` +
  `box-shadow:0 1px 3px #0002}h1{font-size:1.4rem;margin-top:0}dt{font-weight:600;margin-top:.8rem}` +
  `dd{margin:0;word-break:break-all}code{background:#f4f4f5;padding:0 .2rem}` +
  `.warn{color:#92400e;background:#fef3c7;padding:.6rem;border-radius:4px}` +
  `.err{color:#991b1b;background:#fee2e2;padding:.6rem;border-radius:4px}` +
  `label{display:block;margin:1rem 0}input{font:inherit;padding:.3rem;width:100%;box-sizing:border-box}` +
  `button{font:inherit;padding:.5rem 1.2rem;margin-right:.6rem}`;

const STYLE_HASH = createHash("sha256").update(STYLE, "utf8").digest("base64");

/**
 * Builds the page's CSP.
 *
 * @param formTarget The redirect origin an approval form may end at, or null for no form.
 */
function contentSecurityPolicy(formTarget: string | null): string {
  const formAction = formTarget === null ? "'none'" : `'self' ${formTarget}`;
  return [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'`,
    `form-action ${formAction}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/**
 * A complete HTML response. `bodyHtml` must already be escaped.
 *
 * @param formTarget Origin (`scheme://host:port`, never user text with `;`) or null.
 */
export function htmlResponse(
  status: number,
  title: string,
  bodyHtml: string,
  formTarget: string | null,
  extraHeaders: Readonly<Record<string, string>> = {},
): Response {
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)} - htmcp</title><style>${STYLE}</style></head>
<body><main>
${bodyHtml}
</main></body></html>
`;
  return new Response(page, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": contentSecurityPolicy(formTarget),
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
      "cache-control": "no-store",
      "pragma": "no-cache",
      ...extraHeaders,
    },
  });
}

/** A page that only says something (errors, outcomes). */
export function messagePage(
  status: number,
  title: string,
  message: string,
  extraHeaders: Readonly<Record<string, string>> = {},
): Response {
  return htmlResponse(
    status,
    title,
    `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`,
    null,
    extraHeaders,
  );
}
