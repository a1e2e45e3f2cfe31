/**
 * `src/path/` against the reference it replaces: every function gives what
 * `node:path`'s `posix` (and `node:url`'s `fileURLToPath`) gives, case by
 * case over hand-picked edge cases and every path of up to four segments
 * drawn from the tricky ones ("", ".", "..", "...", names, doubled slashes).
 */
import assert from "node:assert/strict";
import { posix as reference } from "node:path";
import { fileURLToPath } from "node:url";
import {
  basename,
  dirname,
  fromFileUrl,
  isAbsolute,
  join,
  normalize,
  relative,
  resolve,
} from "../../src/path/mod.ts";

const EDGES = [
  "",
  "/",
  "//",
  "///",
  ".",
  "..",
  "./",
  "../",
  "a",
  "a/",
  "/a",
  "//a",
  "///a",
  "/a//b",
  "/a/b/",
  "a/./b",
  "a/../..",
  "../../a/../..",
  "/../a",
  "/a/../../b",
  "a/...",
  "...",
  "/jail-evil/a",
  "/jail/../etc/passwd",
  "a b/c d",
];

/** Every path of up to `depth` segments over `segments`, each with and without a leading slash. */
function corpus(segments: readonly string[], depth: number): string[] {
  let level = [""];
  const all = new Set<string>(EDGES);
  for (let d = 0; d < depth; d++) {
    level = level.flatMap((prefix) =>
      segments.map((segment) => (prefix === "" ? segment : `${prefix}/${segment}`))
    );
    for (const path of level) {
      all.add(path);
      all.add(`/${path}`);
      all.add(`${path}/`);
    }
  }
  return [...all];
}

const PATHS = corpus(["", ".", "..", "a", "bc"], 4);

Deno.test("the corpus is large enough to mean something", () => {
  assert.ok(PATHS.length > 1_500, `${PATHS.length} paths`);
});

Deno.test("normalize, dirname, basename and isAbsolute give node:path's result for every path", () => {
  for (const path of PATHS) {
    assert.equal(normalize(path), reference.normalize(path), `normalize(${JSON.stringify(path)})`);
    assert.equal(dirname(path), reference.dirname(path), `dirname(${JSON.stringify(path)})`);
    assert.equal(basename(path), reference.basename(path), `basename(${JSON.stringify(path)})`);
    assert.equal(
      isAbsolute(path),
      reference.isAbsolute(path),
      `isAbsolute(${JSON.stringify(path)})`,
    );
  }
});

Deno.test("resolve gives node:path's result for every path, alone and after a base", () => {
  for (const path of PATHS) {
    assert.equal(resolve(path), reference.resolve(path), `resolve(${JSON.stringify(path)})`);
    for (const base of ["/jail", "/", "rel", ""]) {
      assert.equal(
        resolve(base, path),
        reference.resolve(base, path),
        `resolve(${JSON.stringify(base)}, ${JSON.stringify(path)})`,
      );
    }
  }
  assert.equal(resolve(), reference.resolve());
  assert.equal(resolve("/a", "/b", "c"), reference.resolve("/a", "/b", "c"));
});

Deno.test("join gives node:path's result for every pair of paths", () => {
  const some = PATHS.filter((_, i) => i % 7 === 0);
  for (const a of some) {
    for (const b of EDGES) {
      assert.equal(
        join(a, b),
        reference.join(a, b),
        `join(${JSON.stringify(a)}, ${JSON.stringify(b)})`,
      );
    }
  }
  assert.equal(join(), reference.join());
  assert.equal(join("", ""), reference.join("", ""));
  assert.equal(join("/jail", "a", "", "..", "b"), reference.join("/jail", "a", "", "..", "b"));
});

Deno.test("relative gives node:path's result for every pair of paths", () => {
  const some = PATHS.filter((_, i) => i % 5 === 0);
  for (const from of some) {
    for (const to of EDGES) {
      assert.equal(
        relative(from, to),
        reference.relative(from, to),
        `relative(${JSON.stringify(from)}, ${JSON.stringify(to)})`,
      );
    }
  }
});

Deno.test("isInside's old trap: /jail/../etc normalises outside /jail", () => {
  assert.equal(normalize("/jail/../etc"), "/etc");
  assert.equal(resolve("/jail", "../etc"), "/etc");
});

Deno.test("fromFileUrl gives node:url's path and refuses what it refuses", () => {
  for (
    const url of [
      "file:///",
      "file:///srv/jail",
      "file:///srv/my%20jail/a.ts",
      "file:///a/%E2%9C%93",
      "file:///a/b/../c",
      "file://localhost/etc",
    ]
  ) {
    assert.equal(fromFileUrl(url), fileURLToPath(url), url);
    assert.equal(fromFileUrl(new URL(url)), fileURLToPath(new URL(url)), url);
  }
  for (const url of ["file:///a%2Fb", "file:///a%2fb", "file://host/a", "https://example.com/a"]) {
    assert.throws(() => fileURLToPath(url), `node:url refuses ${url}`);
    assert.throws(() => fromFileUrl(url), TypeError, url);
  }
});
