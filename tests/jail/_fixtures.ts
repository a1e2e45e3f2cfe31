/**
 * A real jail on disk for the jail tests:
 *
 * ```
 * <base>/jail/                 the jail root (real path)
 *   notes.txt
 *   sub/deep/file.txt
 *   link-out      -> <base>/outside        (symlink leaving the jail)
 *   link-in       -> sub                   (symlink staying inside)
 *   dangling-out  -> <base>/outside/new    (dangling, leads out)
 *   dangling-in   -> sub/new               (dangling, stays in)
 *   chain-1 -> chain-2 -> link-out         (a chain that ends outside)
 *   loop-a <-> loop-b                      (a symlink loop)
 *   sub/up        -> ../..                 (relative link to the jail's parent)
 *   file-link     -> <base>/outside/secret (slashless name of an outside file)
 * <base>/jail-evil/                        (shares the jail's prefix)
 * <base>/outside/secret
 * ```
 */

export interface JailFixture {
  readonly base: string;
  readonly root: string;
  readonly outside: string;
  readonly evil: string;
  cleanup(): Promise<void>;
}

export async function makeJail(): Promise<JailFixture> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-jail-" }));
  const root = `${base}/jail`;
  const outside = `${base}/outside`;
  const evil = `${base}/jail-evil`;
  await Deno.mkdir(`${root}/sub/deep`, { recursive: true });
  await Deno.mkdir(outside);
  await Deno.mkdir(evil);
  await Deno.writeTextFile(`${root}/notes.txt`, "notes\n");
  await Deno.writeTextFile(`${root}/sub/deep/file.txt`, "deep\n");
  await Deno.writeTextFile(`${outside}/secret`, "secret\n");
  await Deno.writeTextFile(`${evil}/x`, "evil\n");
  await Deno.symlink(outside, `${root}/link-out`);
  await Deno.symlink("sub", `${root}/link-in`);
  await Deno.symlink(`${outside}/new`, `${root}/dangling-out`);
  await Deno.symlink("sub/new", `${root}/dangling-in`);
  await Deno.symlink("link-out", `${root}/chain-2`);
  await Deno.symlink("chain-2", `${root}/chain-1`);
  await Deno.symlink("loop-b", `${root}/loop-a`);
  await Deno.symlink("loop-a", `${root}/loop-b`);
  await Deno.symlink("../..", `${root}/sub/up`);
  await Deno.symlink(`${outside}/secret`, `${root}/file-link`);
  return {
    base,
    root,
    outside,
    evil,
    async cleanup() {
      await Deno.remove(base, { recursive: true });
    },
  };
}
