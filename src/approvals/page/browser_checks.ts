/**
 * What a browser's request headers must say before the approval page looks
 * at a form: the post comes from our own page, as a top-level navigation.
 *
 * The transport's Host/Origin check runs first, but it lets through every
 * origin in `[http] allowed_origins` (browser MCP clients on other sites):
 * here only the page's own origin may post. The `Sec-Fetch-*` headers
 * (Fetch Metadata, sent by every current browser) add that the post is a
 * same-origin form submission, not a script's fetch or a frame. A header a
 * non-browser leaves out is not required: such a client cannot carry a
 * victim's browser state anyway, and the form token still judges it.
 *
 * @module
 */

/** Why a request was refused by its headers. */
export type BrowserRefusal = "foreign_origin" | "cross_site_fetch" | "not_a_page";

/**
 * Checks a form post.
 *
 * @param request The request (headers only are read).
 * @param ownOrigin The page's origin (`[http] base_url` or the bound origin).
 * @returns null when acceptable, else the reason.
 */
export function refusePost(request: Request, ownOrigin: string): BrowserRefusal | null {
  const origin = request.headers.get("origin");
  // `null` is refused too: unlike the OAuth page (reached through a client's
  // redirect, where privacy settings may blank it) this page posts only to
  // itself, and Chromium sends our origin under the page's referrer policy.
  if (origin !== null && origin !== ownOrigin) return "foreign_origin";
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin") return "cross_site_fetch";
  return refuseEmbedding(request);
}

/**
 * Checks a page load: the page may be opened from anywhere (a link in a
 * chat), but never fetched by a script or embedded (`frame-ancestors 'none'`
 * and `X-Frame-Options` say the same to the browser).
 */
export function refuseGet(request: Request): BrowserRefusal | null {
  return refuseEmbedding(request);
}

function refuseEmbedding(request: Request): BrowserRefusal | null {
  const dest = request.headers.get("sec-fetch-dest");
  if (dest !== null && dest !== "document") return "not_a_page";
  const mode = request.headers.get("sec-fetch-mode");
  if (mode !== null && mode !== "navigate") return "not_a_page";
  return null;
}
