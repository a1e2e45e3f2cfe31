import { equal, match, ok, throws } from "node:assert/strict";
import { confineArgs, isInside } from "../../src/jail/mod.ts";
import { makeJail } from "./_fixtures.ts";

const INSIDE: readonly string[] = [
  "notes.txt",
  "./notes.txt",
  "sub/deep/file.txt",
  "sub/deep/../deep/file.txt",
  "link-in/deep/file.txt",
  "new-file.txt",
  "sub/new/dir/file",
  "dangling-in",
  ".",
  "sub/..",
  "pattern-not-a-file",
  "-la",
  "https://example.com/a/b",
  "x".repeat(300),
];

for (const candidate of INSIDE) {
  Deno.test(`confineArgs() allows ${JSON.stringify(candidate)}, which stays inside`, async () => {
    const jail = await makeJail();
    try {
      const result = await confineArgs(jail.root, jail.root, [candidate]);
      ok(result.ok, JSON.stringify(result));
    } finally {
      await jail.cleanup();
    }
  });
}

Deno.test("confineArgs() allows absolute paths under the jail root", async () => {
  const jail = await makeJail();
  try {
    const result = await confineArgs(jail.root, jail.root, [
      `${jail.root}/notes.txt`,
      `${jail.root}/sub/deep`,
      `${jail.root}/not-yet`,
      jail.root,
    ]);
    ok(result.ok, JSON.stringify(result));
  } finally {
    await jail.cleanup();
  }
});

const OUTSIDE: readonly (readonly [string, (jailBase: string) => string, RegExp])[] = [
  ["an absolute system file", () => "/etc/passwd", /outside the jail/],
  ["the filesystem root", () => "/", /outside the jail/],
  ["a parent reference", () => "../x", /outside the jail/],
  ["a deep parent reference", () => "../../../../etc/passwd", /outside the jail/],
  ["a parent reference after a real folder", () => "sub/../../x", /outside the jail/],
  ["a parent reference through a file", () => "notes.txt/../../x", /outside the jail/],
  ["a parent reference after a missing folder", () => "missing/../../x", /outside the jail/],
  ["a slashless symlink to an outside folder", () => "link-out", /outside the jail/],
  ["a slashless symlink to an outside file", () => "file-link", /outside the jail/],
  ["a path through an outside symlink", () => "link-out/secret", /outside the jail/],
  ["a new file under an outside symlink", () => "link-out/new-file", /outside the jail/],
  ["a dangling symlink that leads out", () => "dangling-out", /outside the jail/],
  ["a symlink chain that leads out", () => "chain-1", /outside the jail/],
  ["a relative symlink to the jail's parent", () => "sub/up/outside/secret", /outside the jail/],
  ["a sibling that shares the jail's prefix", (base) => `${base}/jail-evil/x`, /outside the jail/],
  ["a relative path to the prefix-sharing sibling", () => "../jail-evil/x", /outside the jail/],
  ["a home folder", () => "~", /home folder/],
  ["a home-relative path", () => "~/.ssh/id_rsa", /home folder/],
  ["a symlink loop", () => "loop-a", /cannot be shown|levels/],
  ["a symlink loop reached through a slash", () => "./loop-a/x", /cannot be shown|levels/],
  ["a too-long name followed by a way out", () => `${"y".repeat(300)}/../../x`, /outside the jail/],
  // A name the kernel cannot look up is not judged lexically as "missing".
  ["a path with a name longer than NAME_MAX", () => `sub/${"y".repeat(300)}/z`, /too long/],
  ["a path longer than PATH_MAX", () => `sub/${"d/".repeat(2100)}x`, /too long/],
];

for (const [what, candidate, reason] of OUTSIDE) {
  Deno.test(`confineArgs() refuses ${what} with PATH_ESCAPE`, async () => {
    const jail = await makeJail();
    try {
      const result = await confineArgs(jail.root, jail.root, [candidate(jail.base)]);
      ok(!result.ok, JSON.stringify(result));
      equal(result.code, "PATH_ESCAPE");
      match(result.reason, reason);
    } finally {
      await jail.cleanup();
    }
  });
}

Deno.test("confineArgs() resolves relative candidates against the cwd, not the jail root", async () => {
  const jail = await makeJail();
  try {
    const cwd = `${jail.root}/sub/deep`;
    ok((await confineArgs(jail.root, cwd, ["../../notes.txt"])).ok);
    const out = await confineArgs(jail.root, cwd, ["../../../outside/secret"]);
    ok(!out.ok);
    equal(out.code, "PATH_ESCAPE");
  } finally {
    await jail.cleanup();
  }
});

Deno.test("confineArgs() refuses when any one candidate leaves, naming that argument", async () => {
  const jail = await makeJail();
  try {
    const result = await confineArgs(jail.root, jail.root, ["notes.txt", "sub", "/etc/shadow"]);
    ok(!result.ok);
    match(result.reason, /"\/etc\/shadow"/);
  } finally {
    await jail.cleanup();
  }
});

Deno.test("isInside() compares whole segments, so /jail-evil is not inside /jail", () => {
  ok(isInside("/jail", "/jail"));
  ok(isInside("/jail", "/jail/a"));
  ok(isInside("/jail/", "/jail/a/"));
  ok(!isInside("/jail", "/jail-evil"));
  ok(!isInside("/jail", "/jail-evil/a"));
  ok(!isInside("/jail", "/jailx"));
  ok(!isInside("/jail", "/"));
  ok(!isInside("/jail", "/jail/../etc"));
  ok(isInside("/", "/anything"));
  throws(() => isInside("jail", "/jail"), TypeError);
});

Deno.test("confineArgs() refuses a relative path that plainly leaves the jail with a plain sentence", async () => {
  const jail = await makeJail();
  try {
    for (const candidate of ["../x", "sub/../../x", "../../../etc/passwd"]) {
      const result = await confineArgs(jail.root, jail.root, [candidate]);
      ok(!result.ok, candidate);
      if (!result.ok) {
        equal(result.code, "PATH_ESCAPE");
        equal(result.reason, `The argument "${candidate}" names a path outside the jail.`);
      }
    }
  } finally {
    await jail.cleanup();
  }
});

Deno.test("every layer uses the one isInside: config and permissions refuse /jail/../etc too", async () => {
  const { isInside: configIsInside } = await import("../../src/config/paths.ts");
  const { isInside: grantIsInside } = await import("../../src/permissions/_paths.ts");
  equal(configIsInside, isInside);
  equal(grantIsInside, isInside);
  ok(!configIsInside("/jail", "/jail/../etc"));
  ok(!configIsInside("/jail", "/jail/./../etc/shadow"));
});

Deno.test("confineArgs() resumes lookups when .. climbs back from a missing name to a link", async () => {
  // mkdir -p new/../link-out/x creates new, comes back, and goes through the link.
  const jail = await makeJail();
  try {
    const result = await confineArgs(jail.root, jail.root, ["new/../link-out/x"]);
    ok(!result.ok);
    equal(result.code, "PATH_ESCAPE");
    ok((await confineArgs(jail.root, jail.root, ["new/../link-in/x"])).ok);
  } finally {
    await jail.cleanup();
  }
});

Deno.test("confineArgs() refuses a path it cannot search instead of judging it missing", async () => {
  const jail = await makeJail();
  try {
    await Deno.mkdir(`${jail.root}/locked/inner`, { recursive: true });
    await Deno.chmod(`${jail.root}/locked`, 0o000);
    // As root the kernel ignores the mode; the verdict is then "inside" on real lookups.
    const canSearch = await Deno.lstat(`${jail.root}/locked/inner`).then(() => true, () => false);
    const result = await confineArgs(jail.root, jail.root, [
      "locked/inner/../../../outside/secret",
    ]);
    ok(!result.ok, "refused either way");
    if (!canSearch && !result.ok) match(result.reason, /cannot be searched/);
  } finally {
    await Deno.chmod(`${jail.root}/locked`, 0o755);
    await jail.cleanup();
  }
});
