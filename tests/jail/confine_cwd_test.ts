import { equal, match, ok } from "node:assert/strict";
import { confineCwd } from "../../src/jail/mod.ts";
import { makeJail } from "./_fixtures.ts";

Deno.test("confineCwd() uses the jail root when no cwd is given", async () => {
  const jail = await makeJail();
  try {
    for (const requested of [undefined, "", ".", "./", jail.root, `${jail.root}/`]) {
      const result = await confineCwd(jail.root, requested);
      ok(result.ok, String(requested));
      equal(result.value, jail.root);
    }
  } finally {
    await jail.cleanup();
  }
});

Deno.test("confineCwd() resolves a relative cwd against the jail root", async () => {
  const jail = await makeJail();
  try {
    const result = await confineCwd(jail.root, "sub/deep");
    ok(result.ok);
    equal(result.value, `${jail.root}/sub/deep`);
  } finally {
    await jail.cleanup();
  }
});

Deno.test("confineCwd() follows a symlink that stays inside and returns the real path", async () => {
  const jail = await makeJail();
  try {
    const result = await confineCwd(jail.root, "link-in/deep");
    ok(result.ok);
    equal(result.value, `${jail.root}/sub/deep`);
  } finally {
    await jail.cleanup();
  }
});

Deno.test("confineCwd() allows .. that stays inside", async () => {
  const jail = await makeJail();
  try {
    const result = await confineCwd(jail.root, "sub/deep/../..");
    ok(result.ok);
    equal(result.value, jail.root);
  } finally {
    await jail.cleanup();
  }
});

const ESCAPES: readonly (readonly [string, (root: string, base: string) => string, RegExp])[] = [
  ["an absolute path outside", () => "/etc", /outside the jail/],
  ["the filesystem root", () => "/", /outside the jail/],
  ["a parent reference", () => "..", /outside the jail/],
  ["a deep parent reference", () => "sub/../../..", /outside the jail/],
  ["a symlink that leads out", () => "link-out", /outside the jail/],
  ["a chain of symlinks that leads out", () => "chain-1", /outside the jail/],
  ["a relative symlink to the jail's parent", () => "sub/up", /outside the jail/],
  [
    "a sibling that shares the jail's prefix",
    (_root, base) => `${base}/jail-evil`,
    /outside the jail/,
  ],
  ["a prefix-sharing relative path", () => "../jail-evil", /outside the jail/],
  ["a home folder", () => "~", /home folder/],
  ["a user's home folder", () => "~root", /home folder/],
  ["a symlink loop", () => "loop-a", /cannot be shown|levels/],
  ["a folder that does not exist", () => "missing", /does not exist/],
  ["a file instead of a folder", () => "notes.txt", /not a folder/],
  ["a symlink to an outside file", () => "file-link", /outside the jail/],
  ["a missing path under an outside link", () => "link-out/new/dir", /outside the jail/],
  ["a path through a file", () => "notes.txt/x", /does not exist/],
  ["a NUL character", () => "sub\0x", /NUL/],
];

for (const [what, requested, reason] of ESCAPES) {
  Deno.test(`confineCwd() refuses ${what} with CWD_ESCAPE`, async () => {
    const jail = await makeJail();
    try {
      const result = await confineCwd(jail.root, requested(jail.root, jail.base));
      ok(!result.ok, JSON.stringify(result));
      equal(result.code, "CWD_ESCAPE");
      match(result.reason, reason);
    } finally {
      await jail.cleanup();
    }
  });
}

Deno.test("confineCwd() never reveals where an outside symlink leads", async () => {
  const jail = await makeJail();
  try {
    const result = await confineCwd(jail.root, "link-out");
    ok(!result.ok);
    ok(!result.reason.includes(jail.outside), result.reason);
  } finally {
    await jail.cleanup();
  }
});
