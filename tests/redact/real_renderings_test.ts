/**
 * Secrets as the real tools print them: `grep`, `cat -n`, `nl`, `diff`,
 * `sort`, `tac` and `grep --color=always` run on a fixture folder holding a
 * fake PKCS#8 key, a fake OpenSSH key and a fake GitHub token. For each
 * rendering the test first shows that the raw output exposes the secret,
 * then that nothing of it survives redaction, that the ordinary lines beside
 * it do, and that a second redaction changes nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { makeRedactor } from "./_redactor.ts";
import {
  assertNoKeyMaterial,
  assertNoToken,
  FAKE_GITHUB_TOKEN,
  FAKE_OPENSSH,
  FAKE_OPENSSH_BODY,
  FAKE_PKCS8,
  FAKE_PKCS8_BODY,
  withoutColour,
} from "./_renderings.ts";

const redactor = makeRedactor();
const ORDINARY = ["name=demo", "deploy with make release", "owner: platform-team"];

/** A command, optionally piped into a second one, as a shell would run `a | b`. */
interface Rendering {
  readonly argv: readonly string[];
  readonly pipeTo?: readonly string[];
  readonly locale?: string;
}

const RENDERINGS: readonly Rendering[] = [
  { argv: ["grep", "-r", ".", "keys"] },
  { argv: ["grep", "-rn", ".", "keys"] },
  { argv: ["grep", "-r", "-A3", "BEGIN", "keys"] },
  { argv: ["grep", "-rn", "-A3", "BEGIN", "keys"] },
  { argv: ["grep", "-rn", "-B2", "END", "keys"] },
  { argv: ["grep", "-rn", "--color=always", ".", "keys"] },
  { argv: ["grep", "-r", "--color=always", "-A2", "PRIVATE", "keys"] },
  { argv: ["grep", "--color=always", "ghp", "keys/.env"] },
  { argv: ["grep", "-rn", "--color=always", "-e", "ghp", "-e", "demo", "keys"] },
  { argv: ["cat", "-n", "keys/id_rsa", "keys/.env", "keys/notes.txt"] },
  { argv: ["nl", "-ba", "keys/id_ed25519"] },
  { argv: ["nl", "keys/id_rsa"] },
  { argv: ["diff", "keys/id_rsa", "keys/id_ed25519"] },
  { argv: ["diff", "-u", "keys/id_rsa", "keys/id_ed25519"] },
  { argv: ["diff", "-c", "keys/id_rsa", "keys/id_ed25519"] },
  { argv: ["sort", "keys/id_rsa"], locale: "C" },
  { argv: ["sort", "keys/id_ed25519"], locale: "C.UTF-8" },
  { argv: ["sort", "-r", "keys/id_rsa", "keys/notes.txt"], locale: "C" },
  { argv: ["tac", "keys/id_ed25519"] },
  { argv: ["grep", "-v", "BEGIN", "keys/id_rsa"] },
  { argv: ["sort", "keys/id_rsa"], pipeTo: ["cat", "-n"], locale: "C" },
  { argv: ["grep", "-rn", ".", "keys"], pipeTo: ["sort"], locale: "C" },
];

const decoder = new TextDecoder();

async function run(cwd: string, argv: readonly string[], locale: string, stdin?: string) {
  const command = new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    cwd,
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", LC_ALL: locale },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  });
  const child = command.spawn();
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const { code, stdout, stderr } = await child.output();
  // grep and diff exit 1 for "no match" / "files differ"; 2 and up is a failure.
  assert.ok(code <= 1, `${argv.join(" ")} exited ${code}: ${decoder.decode(stderr)}`);
  return decoder.decode(stdout);
}

async function makeFixture(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-renderings-" });
  await Deno.mkdir(join(dir, "keys"));
  await Deno.writeTextFile(join(dir, "keys", "id_rsa"), FAKE_PKCS8);
  await Deno.writeTextFile(join(dir, "keys", "id_ed25519"), FAKE_OPENSSH);
  await Deno.writeTextFile(
    join(dir, "keys", ".env"),
    `GITHUB_TOKEN=${FAKE_GITHUB_TOKEN}\nname=demo\n`,
  );
  await Deno.writeTextFile(
    join(dir, "keys", "notes.txt"),
    "deploy with make release\nowner: platform-team\n",
  );
  return dir;
}

function exposesKey(raw: string, body: readonly string[]): boolean {
  return body.some((line) => raw.includes(line.slice(8, 24)));
}

for (const rendering of RENDERINGS) {
  const shown = rendering.argv.join(" ") +
    (rendering.pipeTo ? ` | ${rendering.pipeTo.join(" ")}` : "") +
    (rendering.locale ? ` (LC_ALL=${rendering.locale})` : "");
  Deno.test(`redact() leaves nothing of a secret printed by \`${shown}\``, async () => {
    const dir = await makeFixture();
    try {
      const locale = rendering.locale ?? "C.UTF-8";
      let raw = await run(dir, rendering.argv, locale);
      if (rendering.pipeTo) raw = await run(dir, rendering.pipeTo, locale, raw);
      const visible = withoutColour(raw);
      const keys = [FAKE_PKCS8_BODY, FAKE_OPENSSH_BODY].filter((body) => exposesKey(visible, body));
      const token = visible.includes(FAKE_GITHUB_TOKEN.slice(8, 24));
      // The rendering really shows a secret, or the test would prove nothing.
      assert.ok(keys.length > 0 || token, `${shown} printed no secret:\n${raw}`);
      const out = redactor.redact(raw);
      for (const body of keys) assertNoKeyMaterial(out, body, shown);
      if (token) assertNoToken(out, FAKE_GITHUB_TOKEN, shown);
      for (const line of ORDINARY) {
        if (visible.includes(line)) {
          assert.ok(withoutColour(out).includes(line), `${shown}: ${line} was hidden`);
        }
      }
      assert.equal(redactor.redact(out), out, `${shown}: a second redaction changed the text`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
