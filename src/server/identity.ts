/**
 * How htmcp names itself to clients, on both protocol eras: name, version,
 * title and a small icon (an SVG data URI, so no route has to serve it and
 * no client fetches anything from elsewhere).
 *
 * @module
 */
import { VERSION } from "../version.ts";

/** A terminal prompt on a shield: 48x48, a few hundred bytes. */
const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 48 48"><path d="M24 3 6 10v12c0 11 8 20 18 23 10-3 18-12 18-23V10z" fill="#1f2937"/><path d="m15 18 7 6-7 6" fill="none" stroke="#34d399" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/><path d="M25 31h9" stroke="#34d399" stroke-width="3" stroke-linecap="round"/></svg>';

/** The icon as a `data:` URI. */
export const SERVER_ICON_URI = `data:image/svg+xml;base64,${btoa(ICON_SVG)}`;

/** The server's `Implementation` record (`serverInfo`). */
export interface ServerIdentity {
  readonly name: string;
  readonly version: string;
  readonly title: string;
  readonly icons: { src: string; mimeType: string; sizes: string[] }[];
}

/** A fresh identity record (the SDKs may keep a reference to it). */
export function serverIdentity(): ServerIdentity {
  return {
    name: "htmcp",
    version: VERSION,
    title: "htmcp: policy-bound terminal",
    icons: [{ src: SERVER_ICON_URI, mimeType: "image/svg+xml", sizes: ["48x48"] }],
  };
}
