/**
 * `Content-Disposition` for names a model can give a file in the jail:
 * nothing in a name can end the header, start another or smuggle a quote,
 * and the UTF-8 name survives in `filename*` (RFC 6266 / RFC 8187).
 */
import assert from "node:assert/strict";
import { contentDisposition } from "../../src/links/mod.ts";

Deno.test("contentDisposition() keeps CR, LF, quotes and backslashes out of the header and encodes them in filename*", () => {
  const value = contentDisposition('a"\r\nSet-Cookie: x=1;\\b%.txt', false);
  assert.equal(
    value,
    `attachment; filename="a___Set-Cookie: x=1__b_.txt"; filename*=UTF-8''a%22%0D%0ASet-Cookie%3A%20x%3D1%3B%5Cb%25.txt`,
  );
  assert.doesNotThrow(() => new Headers({ "content-disposition": value }));
});

Deno.test("contentDisposition() falls back to 'download' for a name with no ASCII letter or digit and keeps the UTF-8 name", () => {
  assert.equal(
    contentDisposition("日本", true),
    `inline; filename="download"; filename*=UTF-8''%E6%97%A5%E6%9C%AC`,
  );
  assert.equal(
    contentDisposition("\u0007", false),
    `attachment; filename="download"; filename*=UTF-8''%07`,
  );
});
