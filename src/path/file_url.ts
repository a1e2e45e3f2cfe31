/**
 * `fromFileUrl`: the path a `file:` URL names, as `node:url`'s
 * `fileURLToPath` gives it on POSIX, without loading Deno's Node
 * compatibility layer (see `posix.ts` for why that matters at startup).
 *
 * @module
 */

/**
 * The absolute path `url` names.
 *
 * @param url A `file:` URL (a `URL` or its text), such as `import.meta.url`.
 * @returns The decoded path.
 * @throws {TypeError} When `url` is not a `file:` URL, names a host, or
 *   encodes a `/` (`%2F`), which would make one segment look like two.
 * @example
 * ```ts
 * import { fromFileUrl } from "./mod.ts";
 * fromFileUrl("file:///srv/my%20jail"); // "/srv/my jail"
 * ```
 */
export function fromFileUrl(url: string | URL): string {
  const parsed = url instanceof URL ? url : new URL(url);
  if (parsed.protocol !== "file:") {
    throw new TypeError(`"${parsed.href}" is not a file: URL.`);
  }
  if (parsed.hostname !== "") {
    throw new TypeError(`The file: URL "${parsed.href}" names a host; only local paths are read.`);
  }
  if (/%2f/i.test(parsed.pathname)) {
    throw new TypeError(`The file: URL "${parsed.href}" encodes a "/" in a segment.`);
  }
  return decodeURIComponent(parsed.pathname);
}
