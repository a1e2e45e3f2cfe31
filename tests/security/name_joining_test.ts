/**
 * Attack class (mode none, red team): tools that build the name they open
 * from two texts, or run a program from their own input. Each argument is
 * checked on its own, but `gzip -S X/../../s ../../f` opens `../../fX/../../s`
 * through a folder `fX` the model made; csplit joins a prefix and a printf
 * format; GNU tar names an archive's backup by joining `--suffix`; patch
 * names its backups the same way; `zip -T` tests the archive through a
 * shell command line holding its temporary folder; `sdiff -o` starts `ed`,
 * whose `!` runs a shell. Each is first shown against the raw tool, run as
 * the commands' uid, then refused by its guard with POLICY_DENIED through
 * the real server: nothing ran, no host file was read or changed (the
 * canary's folder is open to that uid), the attempt audited.
 */
import { equal, match, ok } from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, chownTree } from "../_helpers/jail.ts";
import { asCommandUid } from "../_helpers/command_uid.ts";

const SECRET = "NAME-JOINING-HOST-SECRET";

/**
 * The layout of every case, `w` standing for the jail: `w/a/b` to work in,
 * folders `w/fX` and `w/tX`, an archive `w/t`; beside `w`, a secret
 * `sec/s.txt` the commands' uid can read and a folder `open` it can write.
 */
async function layout(w: string): Promise<string> {
  await Deno.mkdir(`${w}/a/b/sub`, { recursive: true });
  await Deno.mkdir(`${w}/fX`);
  await Deno.mkdir(`${w}/tX`);
  await Deno.writeTextFile(`${w}/t`, "old archive\n");
  for (const [name, text] of [["in.txt", "payload"], ["s1", "one"], ["s2", "two"]]) {
    await Deno.writeTextFile(`${w}/a/b/${name}`, `${text}\n`);
  }
  // Larger than one 10 KiB volume, and random, so that no compression helps.
  await Deno.writeFile(`${w}/a/b/big`, crypto.getRandomValues(new Uint8Array(40_000)));
  await chownTree(w);
  const beside = w.slice(0, w.lastIndexOf("/"));
  await Deno.mkdir(`${beside}/sec`);
  await Deno.chmod(`${beside}/sec`, 0o755);
  await Deno.writeTextFile(`${beside}/sec/s.txt`, `${SECRET}\n`);
  await Deno.chmod(`${beside}/sec/s.txt`, 0o644);
  await Deno.mkdir(`${beside}/open`);
  await Deno.chmod(`${beside}/open`, 0o777);
  return `${w}/a/b`;
}

/** The attacks, run in `w/a/b`. */
function attacks() {
  // sdiff reads its own stdin in 4096-byte blocks; ed gets what follows.
  const sdiffInput = "e\n" + "#".repeat(4096 - 3) + "\n" + "!id > ../../../open/sdiff\nq\n";
  return [
    // gzip's suffix is at most 30 bytes: the secret sits beside the jail.
    { guard: "gzip-suffix", argv: ["gzip", "-dcf", "-S", "X/../../sec/s.txt", "../../f"] },
    {
      guard: "csplit-names",
      argv: ["csplit", "-f", "sub/.", "-b", "%.0d./../../../open/csplit", "-", "%^%"],
      stdin: "PWNED\n",
    },
    {
      guard: "tar-backup-suffix",
      argv: ["tar", "-cf", "../../t", "--backup", "--suffix=X/../../open/tar", "in.txt"],
    },
    { guard: "sdiff-merge", argv: ["sdiff", "-o", "sout", "s1", "s2"], stdin: sdiffInput },
    // tar asks for the next volume on stdin: `n NAME` names it, anywhere.
    {
      guard: "tar-multi-volume",
      argv: ["tar", "-c", "-M", "-L", "10", "-f", "vol1", "big"],
      stdin: "n ../../../open/tar-volume\n",
    },
  ] as const;
}

const quote = (word: string) => `'${word.replaceAll("'", `'"'"'`)}'`;

async function refusedByGuard(
  h: Harness,
  guard: string,
  command: string,
  cwd?: string,
  stdin?: string,
) {
  const result = await h.call("run_command", {
    command,
    ...(cwd === undefined ? {} : { cwd }),
    ...(stdin === undefined ? {} : { stdin }),
  });
  equal(result.code, "POLICY_DENIED", `${command}: ${JSON.stringify(result)}`);
  match(result.policy_reason, new RegExp(`guard "${guard}"`));
  equal(result.exit_code, null, "nothing ran");
  ok(!JSON.stringify(result).includes(SECRET));
  const attempt = (await h.records()).findLast((r) => r.command_raw === command);
  equal(attempt?.code, "POLICY_DENIED");
}

Deno.test("none: names joined from two checked texts, and programs started from a tool's input, are refused (red team)", async (t) => {
  const h = await startHarness({
    allow: ["ls", "cat", "mkdir", "tee", "gzip", "zcat", "split", "csplit", "tar", "sdiff", "zip"],
    sandbox: "none",
  });
  try {
    await t.step("the server under test runs commands unsandboxed (mode none)", async () => {
      await assertSandboxMode(h, "none");
    });

    await t.step(
      "raw: each attack as the commands' uid reads the secret or writes outside",
      async () => {
        const root = await Deno.realPath(await Deno.makeTempDir({ dir: h.dir, prefix: "raw-" }));
        await Deno.chmod(root, 0o755);
        const cwd = await layout(`${root}/w`);
        for (const attack of attacks()) {
          const raw = await asCommandUid(attack.argv, cwd, "stdin" in attack ? attack.stdin : "");
          if (attack.guard === "gzip-suffix") ok(raw.out.includes(SECRET), "raw gzip -S read it");
        }
        for (const name of ["csplit", "tar", "sdiff"]) {
          ok(await exists(`${root}/open/${name}`), `raw ${name} wrote outside`);
        }
      },
    );

    await t.step(
      "htmcp: each is refused by its guard, and nothing is read or written",
      async () => {
        const cwd = await layout(h.jail);
        for (const attack of attacks()) {
          const [name, ...args] = attack.argv;
          await refusedByGuard(
            h,
            attack.guard,
            [name, ...args.map(quote)].join(" "),
            cwd.slice(h.jail.length + 1),
            "stdin" in attack ? attack.stdin : undefined,
          );
        }
        for (const name of ["csplit", "tar", "sdiff"]) {
          ok(!(await exists(`${h.dir}/open/${name}`)), `${name} wrote outside`);
        }
        equal(await Deno.readTextFile(`${h.jail}/t`), "old archive\n", "no backup was made");
      },
    );

    await t.step(
      "raw and htmcp: zip -T with a quote in its temporary folder runs a shell",
      async () => {
        const root = await Deno.realPath(await Deno.makeTempDir({ dir: h.dir, prefix: "rawzip-" }));
        await Deno.chmod(root, 0o755);
        const open = `${h.dir}/open`;
        const script = `echo RAN > ${open}/zip\n`;
        const folder = `d'$(sh x)'`;
        for (const base of [root, h.jail]) {
          await Deno.writeTextFile(`${base}/x`, script);
          await Deno.writeTextFile(`${base}/z.txt`, "z\n");
          await Deno.mkdir(`${base}/${folder}`);
          await chownTree(base === root ? root : `${base}/${folder}`);
        }
        await asCommandUid(["zip", "-T", "-b", folder, "c.zip", "z.txt"], root);
        ok(await Deno.stat(`${open}/zip`).then(() => true, () => false), "raw zip -T ran sh");
        await Deno.remove(`${open}/zip`);
        await refusedByGuard(h, "zip-test", `zip -T -b ${quote(folder)} c.zip z.txt`);
        ok(!(await Deno.stat(`${open}/zip`).then(() => true, () => false)), "nothing ran");
      },
    );
    await t.step(
      "raw and htmcp: gzip -rf follows a link out of the jail while it recurses",
      async () => {
        const root = await Deno.realPath(await Deno.makeTempDir({ dir: h.dir, prefix: "rawgz-" }));
        await Deno.chmod(root, 0o755);
        for (const base of [root, h.jail]) {
          const outside = `${base === root ? root : h.dir}/gz-open`;
          await Deno.mkdir(outside);
          await Deno.chmod(outside, 0o777);
          await Deno.writeTextFile(`${outside}/c.txt`, "canary\n");
          await Deno.chmod(`${outside}/c.txt`, 0o666);
          await Deno.mkdir(`${base}/gz`);
          await Deno.symlink(outside, `${base}/gz/o`);
          await chownTree(`${base}/gz`);
        }
        await asCommandUid(["gzip", "-rf", "gz"], root);
        ok(await exists(`${root}/gz-open/c.txt.gz`), "raw gzip -rf compressed a file outside");
        const result = await h.call("run_command", { command: "gzip -rf gz" });
        equal(result.code, "PATH_ESCAPE", JSON.stringify(result));
        equal(result.exit_code, null, "nothing ran");
        equal(await Deno.readTextFile(`${h.dir}/gz-open/c.txt`), "canary\n", "untouched");
        const attempt = (await h.records()).findLast((r) => r.command_raw === "gzip -rf gz");
        equal(attempt?.code, "PATH_ESCAPE");
      },
    );
    await t.step(
      "raw and htmcp: split and zcat open names they build, through a link leading out",
      async () => {
        const root = await Deno.realPath(
          await Deno.makeTempDir({ dir: h.dir, prefix: "rawsplit-" }),
        );
        await Deno.chmod(root, 0o755);
        for (const base of [root, h.jail]) {
          const outside = `${base === root ? root : h.dir}/split-open`;
          await Deno.mkdir(outside);
          await Deno.chmod(outside, 0o777);
          await Deno.writeTextFile(`${outside}/canary`, "canary\n");
          await Deno.chmod(`${outside}/canary`, 0o666);
          await Deno.mkdir(`${base}/sp`);
          await Deno.writeTextFile(`${base}/sp/in`, "WRITTEN\n");
          // Links an operator's project may hold: at a name split builds, and one gzip tries.
          await Deno.symlink(`${outside}/canary`, `${base}/sp/xaa`);
          await Deno.symlink(`${outside}/canary`, `${base}/sp/s.gz`);
          await chownTree(`${base}/sp`);
        }
        await asCommandUid(["split", "in"], `${root}/sp`);
        equal(
          await Deno.readTextFile(`${root}/split-open/canary`),
          "WRITTEN\n",
          "raw split wrote outside",
        );
        const read = await asCommandUid(["zcat", "-f", "s"], `${root}/sp`);
        ok(read.out.includes("WRITTEN"), "raw zcat -f s read the host file");
        const split = await h.call("run_command", { command: "split in", cwd: "sp" });
        equal(split.code, "POLICY_DENIED", JSON.stringify(split));
        const zcat = await h.call("run_command", { command: "zcat -f s", cwd: "sp" });
        equal(zcat.code, "PATH_ESCAPE", JSON.stringify(zcat));
        for (const result of [split, zcat]) equal(result.exit_code, null, "nothing ran");
        equal(await Deno.readTextFile(`${h.dir}/split-open/canary`), "canary\n", "untouched");
      },
    );
  } finally {
    await h.close();
  }
});
