/**
 * The git-dev pack through the real MCP client against a real git
 * repository made in the test, in the kernel sandbox: the allowed forms
 * work (init, add, commit, log), and every abbreviation of git's
 * code-running and file-writing options is refused with POLICY_DENIED,
 * audited, with canaries inside and outside the jail untouched.
 *
 * The commit identity: git-dev allows no `-c` and htmcp points git's global
 * and system configuration at /dev/null, so the operator (this test) writes
 * `user.name`/`user.email` into the repository's own `.git/config` after
 * `git init`, the legal place the repository check reads and accepts.
 */
import assert from "node:assert/strict";
import { parse } from "smol-toml";
import { exists, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, chownTree } from "../_helpers/jail.ts";

const PACK = new URL("../../policies/git-dev.toml", import.meta.url);

/** The pack's allowlist and its `[commands.git]` table, as written in the pack. */
async function gitDevParts(): Promise<{ allow: string[]; gitTable: string }> {
  const text = await Deno.readTextFile(PACK);
  const allow = (parse(text) as { allowlist: { commands: string[] } }).allowlist.commands;
  const start = text.indexOf("\n[commands.git]\n") + 1;
  const end = text.indexOf("\n[", start + 1);
  assert.ok(start > 0 && end !== -1, "the pack has a [commands.git] table");
  return { allow, gitTable: text.slice(start, end) };
}

/** Every prefix of a long option git would accept as an abbreviation, from 3 characters. */
function prefixes(option: string): string[] {
  const out: string[] = [];
  for (let length = 3; length <= option.length; length++) out.push(option.slice(0, length));
  return out;
}

async function listTree(root: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(`${root}/${prefix}`)) {
    const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    out.push(path);
    if (entry.isDirectory) out.push(...await listTree(root, path));
  }
  return out.sort();
}

Deno.test("under git-dev the real client commits to a real repository and every option abbreviation that runs code or writes files is refused", async () => {
  const { allow, gitTable } = await gitDevParts();
  const h = await startHarness({
    allow,
    extraToml: gitTable,
    files: { "src/a.txt": "one\n", "canary.txt": "canary\n" },
  });
  try {
    await assertSandboxMode(h, "bwrap");
    const outside = `${h.dir}/outside-canary.txt`;
    await Deno.writeTextFile(outside, "outside\n");

    const init = await h.call("run_command", { command: "git init -q" });
    assert.equal(init.ok, true, JSON.stringify(init));
    assert.equal(await exists(`${h.jail}/.git/HEAD`), true);
    await Deno.writeTextFile(
      `${h.jail}/.git/config`,
      "[user]\n\tname = htmcp test\n\temail = test@example.invalid\n",
      { append: true },
    );
    await chownTree(`${h.jail}/.git`);

    for (const command of ["git add -A", "git commit -m x"]) {
      const result = await h.call("run_command", { command });
      assert.equal(result.ok, true, `${command}: ${JSON.stringify(result)}`);
      assert.equal(result.exit_code, 0, `${command}: ${result.stderr}`);
    }
    const log = await h.call("run_command", { command: "git log --oneline" });
    assert.equal(log.exit_code, 0, log.stderr);
    assert.match(log.stdout, /^[0-9a-f]{7,} x\n$/);
    const status = await h.call("run_command", { command: "git status --short" });
    assert.equal(status.stdout, "", "the commit took every file");

    const before = await listTree(h.jail);
    const forms: string[] = ["git -c core.pager=touch log", "git -ccore.pager=touch log"];
    for (const option of ["--upload-pack", "--exec", "--config-env", "--output"]) {
      for (const spelled of prefixes(option)) {
        forms.push(`git log ${spelled}=canary.txt`);
      }
      forms.push(`git ${option}=x log`, `git commit -m y ${option}=../outside-canary.txt`);
    }
    for (const command of forms) {
      const result = await h.call("run_command", { command });
      assert.equal(result.ok, false, `${command} was allowed`);
      assert.equal(result.code, "POLICY_DENIED", `${command}: ${result.policy_reason}`);
    }
    assert.deepEqual(await listTree(h.jail), before, "nothing appeared or vanished in the jail");
    assert.equal(await Deno.readTextFile(`${h.jail}/canary.txt`), "canary\n");
    assert.equal(await Deno.readTextFile(outside), "outside\n");
    const after = await h.call("run_command", { command: "git log --oneline" });
    assert.equal(after.stdout, log.stdout, "no commit was added by a refused form");

    const attempts = (await h.records()).filter((r) => r.kind === "attempt");
    for (const command of forms) {
      const record = attempts.find((r) => r.command_raw === command);
      assert.equal(record?.verdict, "deny", command);
      assert.equal(record?.code, "POLICY_DENIED", command);
    }
    assert.equal(attempts.filter((r) => r.verdict === "allow").length >= 5, true);
  } finally {
    await h.close();
  }
});
