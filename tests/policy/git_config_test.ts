/**
 * parseGitConfig() against git itself: for each text, the entries must be
 * exactly what `git config --list -z --file` prints, and where git refuses
 * a file, the parser refuses it too. A mismatch
 * would let a planted key pass the repository check unseen.
 */
import { deepEqual, ok } from "node:assert/strict";
import { entryKey, parseGitConfig } from "../../src/policy/git_config.ts";

const CORPUS: readonly string[] = [
  "[core]\n\tbare = false\n",
  "[core]\nbare\n",
  '[remote "origin"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
  '[remote "Or\\"ig\\\\in"]\n\turl = x\n',
  "[Remote.Origin]\n\tURL = y\n",
  '[a "b.c"]\n\td = e\n',
  '[a.b "c"]\n\td = e\n',
  '[x]\n\ty = "quoted ; not a comment" # a comment\n',
  "[x]\n\ty = a\\\n  b\n",
  '[x]\n\ty = "a\\tb\\nc\\\\d\\"e"\n',
  "[x]\n\ty =   leading and trailing   \n",
  "[x]\n\ty = inner   spaces\tand\ttabs\n",
  "[x]\r\n\ty = crlf\r\n",
  "\uFEFF[x]\n\ty = bom\n",
  "# comment\n; another\n[x] y = same line\n",
  "[x]\n\ty=\n",
  "[x]\n\ty = 1\n\ty = 2\n",
  "[x]\n\tyY-z = 1\n",
  '[core]\n\tfsmonitor = "/tmp/a" "b"\n',
  "[core]\n\tfsmon\\\nitor = x\n",
  "[x]\n\ty = a\\qb\n",
  "[x\n",
  '[x "unterminated]\n',
  "[x]\n\t1y = z\n",
  '[x]\n\ty = "open\n',
  "[x]\n\ty z\n",
  "[]\n\ty = z\n",
  "[x]\n\ty = last-line-without-newline",
  "[x]\n\ty",
];

async function gitList(text: string): Promise<{ ok: boolean; keys: string[] }> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-config-" });
  try {
    await Deno.writeTextFile(`${dir}/config`, text);
    const result = await new Deno.Command("git", {
      args: ["config", "--file", `${dir}/config`, "--no-includes", "--list", "-z"],
      cwd: dir,
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin", HOME: dir, GIT_CONFIG_NOSYSTEM: "1" },
      stdout: "piped",
      stderr: "null",
    }).output();
    const out = new TextDecoder().decode(result.stdout);
    const keys = out.split("\0").filter((item) => item !== "");
    return { ok: result.success, keys };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

for (const text of CORPUS) {
  Deno.test(`parseGitConfig() reads ${JSON.stringify(text)} as git does`, async () => {
    const git = await gitList(text);
    const ours = parseGitConfig(text);
    if (!git.ok) {
      // git refuses the file (every git command there fails); so does the parser.
      ok(!ours.ok, `git refuses it, the parser read ${JSON.stringify(ours)}`);
      return;
    }
    ok(ours.ok, `git accepts it, the parser refused: ${JSON.stringify(ours)}`);
    const mine = ours.entries.map((entry) =>
      entry.value === null ? entryKey(entry) : `${entryKey(entry)}\n${entry.value}`
    );
    deepEqual(mine, git.keys);
  });
}
