/**
 * Attack class (mode none): archive tools that take the files they read or
 * write from somewhere no argument check sees. `zip -@` archives the files
 * named on stdin; `unzip` extracts whatever names and links the archive
 * holds (a member linking out of the jail, then a member written through
 * it; `../` members with `-:`). Each is first shown against the raw tool,
 * run as the commands' uid, then refused by htmcp with POLICY_DENIED through
 * the real server and client: nothing ran, no host file was read or written
 * (the outside canary's folder is open to that uid), the attempt audited.
 * Listing and printing an archive still run.
 */
import { equal, match, ok } from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, chownTree, openCanary } from "../_helpers/jail.ts";
import { asCommandUid } from "../_helpers/command_uid.ts";

const SECRET = "ARCHIVE-TOOLS-HOST-SECRET";

async function zipOf(folder: string, args: readonly string[]): Promise<void> {
  const out = await new Deno.Command("zip", { args: ["-q", ...args], cwd: folder }).output();
  equal(out.code, 0, `setup: zip ${args.join(" ")}`);
}

/**
 * Archives built outside the jail: `link.zip` holds a link `l` to `target`,
 * `through.zip` a file `l/PWNED`, which unzip writes through that link.
 */
async function plantArchives(base: string, into: string, target: string): Promise<void> {
  const work = await Deno.makeTempDir({ dir: base, prefix: "zips-" });
  await Deno.symlink(target, `${work}/l`);
  await zipOf(work, ["--symlinks", "link.zip", "l"]);
  await Deno.remove(`${work}/l`);
  await Deno.mkdir(`${work}/l`);
  await Deno.writeTextFile(`${work}/l/PWNED`, "pwned\n");
  await zipOf(work, ["-r", "through.zip", "l"]);
  for (const name of ["link.zip", "through.zip"]) {
    await Deno.copyFile(`${work}/${name}`, `${into}/${name}`);
  }
  await Deno.remove(work, { recursive: true });
}

async function refused(h: Harness, command: string, stdin?: string) {
  const result = await h.call(
    "run_command",
    stdin === undefined ? { command } : { command, stdin },
  );
  equal(result.code, "POLICY_DENIED", `${command}: ${JSON.stringify(result)}`);
  equal(result.exit_code, null, "nothing ran");
  ok(!JSON.stringify(result).includes(SECRET));
  const attempt = (await h.records()).findLast((r) => r.command_raw === command);
  equal(attempt?.code, "POLICY_DENIED");
  equal(attempt?.verdict, "deny");
  return result;
}

Deno.test("none: zip -@ archives no host file named on stdin, and unzip extracts nothing (red team, mode none)", async (t) => {
  const h = await startHarness({ allow: ["ls", "cat", "zip", "unzip"], sandbox: "none" });
  try {
    await t.step("the server under test runs commands unsandboxed (mode none)", async () => {
      await assertSandboxMode(h, "none");
    });
    const secret = await openCanary(h.dir, "secret.txt", `${SECRET}\n`);
    const target = secret.slice(0, secret.lastIndexOf("/"));
    await Deno.chmod(secret, 0o644);

    await t.step(
      "raw: zip -@ as the commands' uid archives the host file named on stdin",
      async () => {
        const scratch = `${h.jail}/raw-scratch`;
        await Deno.mkdir(scratch);
        await chownTree(scratch);
        await asCommandUid(["zip", "-q", "-@", "o.zip"], scratch, `${secret}\n`);
        const printed = await asCommandUid(["unzip", "-p", "o.zip"], scratch);
        equal(printed.out, `${SECRET}\n`);
        await Deno.remove(scratch, { recursive: true });
      },
    );
    await t.step("htmcp: zip -@ and --names-stdin are refused", async () => {
      for (const command of ["zip -@ o.zip", "zip -r@ o.zip", "zip --names-stdin o.zip"]) {
        const result = await refused(h, command, `${secret}\n`);
        match(result.policy_reason, /read the paths it opens from a file/);
      }
      ok(!(await exists(`${h.jail}/o.zip`)), "no archive was made");
    });

    await plantArchives(h.dir, h.jail, target);
    await chownTree(h.jail);
    await t.step("raw: unzip as the commands' uid writes through a member link", async () => {
      const scratch = `${h.jail}/raw-scratch`;
      await Deno.mkdir(scratch);
      for (const name of ["link.zip", "through.zip"]) {
        await Deno.copyFile(`${h.jail}/${name}`, `${scratch}/${name}`);
      }
      await chownTree(scratch);
      await asCommandUid(["unzip", "-q", "-o", "link.zip"], scratch);
      await asCommandUid(["unzip", "-q", "-o", "through.zip"], scratch);
      ok(await exists(`${target}/PWNED`), "raw unzip wrote outside the jail");
      await Deno.remove(`${target}/PWNED`);
      await Deno.remove(scratch, { recursive: true });
    });
    await t.step(
      "htmcp: unzip that extracts is refused; listing, testing and printing run",
      async () => {
        for (
          const command of [
            "unzip link.zip",
            "unzip -o link.zip",
            "unzip -: -o through.zip",
            "unzip -d out through.zip",
            "unzip through.zip -l",
          ]
        ) {
          const result = await refused(h, command);
          match(result.policy_reason, /extracts whatever names and links the archive holds/);
        }
        ok(!(await exists(`${h.jail}/l`)), "no member was extracted");
        ok(!(await exists(`${target}/PWNED`)), "nothing was written outside");
        for (
          const command of ["unzip -l link.zip", "unzip -t through.zip", "unzip -p through.zip"]
        ) {
          const result = await h.call("run_command", { command });
          equal(result.code, "OK", `${command}: ${JSON.stringify(result)}`);
        }
        ok(!(await exists(`${h.jail}/l`)), "listing extracted nothing");
      },
    );
  } finally {
    await h.close();
  }
});
