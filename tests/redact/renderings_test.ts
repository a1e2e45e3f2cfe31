/**
 * The redaction corpus for secrets as tools print them: behind line
 * prefixes (`grep -r`, `grep -rn`, `grep -A`, `cat -n`, `nl`, `diff`), split
 * by terminal escapes (`grep --color=always`), and private keys whose lines
 * were reordered (`sort`, `tac`) or partly filtered (`grep -v`). One test per
 * rendering; the same renderings produced by the real tools are in
 * `real_renderings_test.ts`.
 */
import assert from "node:assert/strict";
import { makeRedactor, PEM_BODY, pemBlock } from "./_redactor.ts";
import {
  assertNoKeyMaterial,
  assertNoToken,
  FAKE_GITHUB_TOKEN,
  FAKE_PKCS8,
  FAKE_PKCS8_BODY,
} from "./_renderings.ts";

const redactor = makeRedactor();
const everything = makeRedactor({ entropyFallback: true });
const R = "[REDACTED:private_key]";
const KEY_LINES = pemBlock().split("\n");
const BEGIN = KEY_LINES[0]!;
const END = KEY_LINES.at(-1)!;

/** Each line of the key with `prefix(lineNumber)` in front. */
function prefixed(prefix: (n: number) => string, lines = KEY_LINES): string {
  return lines.map((line, i) => prefix(i + 1) + line).join("\n") + "\n";
}

function assertHidden(out: string, what: string): void {
  assertNoKeyMaterial(out, PEM_BODY, what);
  assert.equal(redactor.redact(out), out, `${what}: a second redaction changed the text`);
}

Deno.test("redact() hides a key printed by `grep -r . keys` (file-name prefix on every line)", () => {
  const out = redactor.redact(prefixed(() => "keys/id_rsa:"));
  assert.equal(out, `keys/id_rsa:${R}\n`);
});

Deno.test("redact() hides a key printed by `grep -rn . keys` (file name and line number)", () => {
  const out = redactor.redact(prefixed((n) => `keys/id_rsa:${n}:`));
  assert.equal(out, `keys/id_rsa:1:${R}\n`);
});

Deno.test("redact() hides key lines printed as `grep -rn -A` context lines (`path-N-`)", () => {
  const text = prefixed((n) => (n === 1 ? `keys/id_rsa:${n}:` : `keys/id_rsa-${n}-`));
  const out = redactor.redact(text);
  assert.equal(out, `keys/id_rsa:1:${R}\n`);
});

Deno.test("redact() hides key lines printed as `grep -A` context lines without numbers (`path-`)", () => {
  const lines = KEY_LINES.slice(0, 3);
  const text = prefixed((n) => (n === 1 ? "keys/id-rsa:" : "keys/id-rsa-"), lines) + "--\n";
  const out = redactor.redact(text);
  assert.equal(out, `keys/id-rsa:${R}\n--\n`);
});

Deno.test("redact() hides key lines printed as `grep -B` context before the END line", () => {
  const lines = KEY_LINES.slice(-3);
  const text = prefixed((n) => (n === 3 ? "k/id:" : "k/id-"), lines);
  assertHidden(redactor.redact(text), "grep -B2 END");
});

Deno.test("redact() hides a key printed by `cat -n` (padded number and a tab)", () => {
  const out = redactor.redact(prefixed((n) => `${String(n).padStart(6)}\t`));
  assert.equal(out, `     1\t${R}\n`);
});

Deno.test("redact() hides a key printed by `nl -ba` and by `nl` (blank lines left unnumbered)", () => {
  const withBlank = [...KEY_LINES.slice(0, 2), "", ...KEY_LINES.slice(2)];
  let n = 0;
  const nl = withBlank.map((
    line,
  ) => (line === "" ? "       " : `${String(++n).padStart(6)}\t${line}`));
  const out = redactor.redact(nl.join("\n") + "\n");
  assert.equal(out, `     1\t${R}\n`);
  assertHidden(redactor.redact(prefixed((i) => `${String(i).padStart(6)}\t`)), "nl -ba");
});

Deno.test("redact() hides a key in a normal `diff` (`< ` and `> ` lines)", () => {
  assert.equal(redactor.redact(`1,5d0\n${prefixed(() => "< ")}`), `1,5d0\n< ${R}\n`);
  assert.equal(redactor.redact(`0a1,5\n${prefixed(() => "> ")}`), `0a1,5\n> ${R}\n`);
});

Deno.test("redact() hides a key in a unified diff (`-` and `+` lines)", () => {
  const header = "--- a/id_rsa\n+++ /dev/null\n@@ -1,5 +0,0 @@\n";
  assert.equal(redactor.redact(header + prefixed(() => "-")), `${header}-${R}\n`);
  assertHidden(redactor.redact(header + prefixed(() => "+")), "diff -u, added key");
});

Deno.test("redact() hides a key in a context diff (`- ` and `! ` lines)", () => {
  assert.equal(redactor.redact(prefixed(() => "- ")), `- ${R}\n`);
  assert.equal(redactor.redact(prefixed(() => "! ")), `! ${R}\n`);
});

Deno.test("redact() hides an encrypted key's headers and body behind a grep prefix", () => {
  const lines = [
    "-----BEGIN RSA PRIVATE KEY-----",
    "Proc-Type: 4,ENCRYPTED",
    "DEK-Info: AES-128-CBC,6A87D3E9E4D3B1C5A5B1E0B3F0E4C1D2",
    "",
    ...PEM_BODY,
    "-----END RSA PRIVATE KEY-----",
  ];
  const out = redactor.redact(prefixed((n) => `secrets/old.pem:${n}:`, lines));
  assert.equal(out, `secrets/old.pem:1:${R}\n`);
});

Deno.test("redact() hides key lines that `sort` put after the BEGIN and END lines", () => {
  const sorted = [...KEY_LINES].sort().join("\n") + "\n";
  assert.ok(sorted.startsWith(`${BEGIN}\n${END}\n`), "C-locale sort puts the dash lines first");
  assertHidden(redactor.redact(sorted), "sort");
});

Deno.test("redact() hides key lines that `tac` and `sort -r` put before the END line", () => {
  assertHidden(redactor.redact([...KEY_LINES].reverse().join("\n")), "tac");
  assertHidden(redactor.redact([...KEY_LINES].sort().reverse().join("\n")), "sort -r");
});

Deno.test("redact() hides key lines left by `grep -v BEGIN` (an END line with no block)", () => {
  assertHidden(redactor.redact(KEY_LINES.slice(1).join("\n")), "grep -v BEGIN");
});

Deno.test("redact() hides key lines that were sorted, then numbered (`sort key | cat -n`)", () => {
  const sorted = [...KEY_LINES].sort();
  assertHidden(
    redactor.redact(prefixed((n) => `${String(n).padStart(6)}\t`, sorted)),
    "sort|cat -n",
  );
});

Deno.test("redact() hides every line of a long sorted key, its short last line included", () => {
  const lines = ["-----BEGIN PRIVATE KEY-----", ...FAKE_PKCS8_BODY, "-----END PRIVATE KEY-----"];
  const out = redactor.redact(lines.sort().join("\n") + "\n");
  assertNoKeyMaterial(out, FAKE_PKCS8_BODY, "sort of a 2048-bit key");
});

Deno.test("redact() keeps ordinary lines beside a sorted key", () => {
  const text = [...KEY_LINES, "Makefile", "README", "name=demo", "total 48"].sort().join("\n");
  const out = redactor.redact(text);
  // (C-locale sort puts BEGIN and END side by side, an empty block that is hidden.)
  for (const kept of ["Makefile", "README", "name=demo", "total 48"]) {
    assert.ok(out.includes(kept), `${JSON.stringify(kept)} was hidden`);
  }
  assertNoKeyMaterial(out, PEM_BODY, "sort with other lines");
});

Deno.test("redact() hides a GitHub token that `grep --color=always ghp` split with escapes", () => {
  const colored = `GITHUB_TOKEN=\x1b[01;31m\x1b[Kghp\x1b[m\x1b[K${FAKE_GITHUB_TOKEN.slice(3)}\n`;
  const out = redactor.redact(colored);
  // The whole printed stretch goes, escapes inside it included; the escape
  // that opened the colour before the token stays.
  assert.equal(out, "GITHUB_TOKEN=\x1b[01;31m\x1b[K[REDACTED:github_token]\n");
});

Deno.test("redact() hides a token split by colour escapes behind a coloured grep file-name prefix", () => {
  const token = FAKE_GITHUB_TOKEN;
  const colored = `\x1b[35m\x1b[Kcfg/.env\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K` +
    `token=${token.slice(0, 10)}\x1b[01;31m\x1b[K${token.slice(10, 20)}\x1b[m\x1b[K${
      token.slice(20)
    }\n`;
  const out = redactor.redact(colored);
  assertNoToken(out, token, "grep --color=always");
  assert.ok(out.includes("cfg/.env"), "the file name stays");
  assert.equal(redactor.redact(out), out);
});

Deno.test("redact() hides a key whose BEGIN line grep coloured, behind coloured prefixes", () => {
  const color = (line: string) =>
    `\x1b[35m\x1b[Kk/id\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K` +
    line.replace("PRIVATE", "\x1b[01;31m\x1b[KPRIVATE\x1b[m\x1b[K");
  const out = redactor.redact(KEY_LINES.map(color).join("\n") + "\n");
  assertHidden(out, "grep --color=always -r . keys");
});

Deno.test("redact() hides a password in a URL inside an OSC 8 hyperlink and in its text", () => {
  const url = "https://deploy:s3cr3t-Pa55w0rd@git.example.com/repo";
  const link = `\x1b]8;;${url}\x1b\\${url}\x1b]8;;\x1b\\\n`;
  const out = redactor.redact(link);
  assert.ok(!out.includes("s3cr3t-Pa55w0rd"), JSON.stringify(out));
  assert.ok(out.includes("git.example.com"));
});

Deno.test("redact() still sees a token ended by an escape sequence (`ls --color` style)", () => {
  const text = `\x1b[0m\x1b[01;32mAKIAIOSFODNN7EXAMPLE\x1b[0mX\n`;
  assert.equal(redactor.redact(text), `\x1b[0m\x1b[01;32m[REDACTED:aws_access_key_id]\x1b[0mX\n`);
});

const UNCHANGED: ReadonlyArray<readonly [string, string]> = [
  [
    "`grep -rn` over source code",
    "src/a.ts:12:const token = await getToken();\nsrc/b.ts:3:  password: string;\n" +
    'src/c.ts:40:if (line.startsWith("-----BEGIN PRIVATE KEY-----")) return;\n',
  ],
  [
    "`ls --color` output",
    "\x1b[0m\x1b[01;34msrc\x1b[0m  \x1b[01;32mbuild.sh\x1b[0m  README.md  \x1b[01;36mtoken.ts\x1b[0m\n",
  ],
  [
    "coloured `git log --oneline`",
    "\x1b[33m3f78685\x1b[m Fix token refresh\n\x1b[33m1a2b3c4\x1b[m Rotate keys (no secrets)\n",
  ],
  [
    "a BEGIN line in documentation, numbered",
    "     1\t-----BEGIN PRIVATE KEY-----\n     2\tis how a key file starts; never commit one.\n",
  ],
  [
    "`diff -u` of ordinary config",
    '--- a/app.toml\n+++ b/app.toml\n@@ -1,2 +1,2 @@\n-name = "demo"\n+name = "demo2"\n port = 8080\n',
  ],
];

Deno.test("redact() leaves a certificate printed by `cat -n` unchanged (defaults; entropy hides base64)", () => {
  const cert = ["-----BEGIN CERTIFICATE-----", ...PEM_BODY, "-----END CERTIFICATE-----"];
  const text = prefixed((n) => `${String(n).padStart(6)}\t`, cert);
  assert.equal(redactor.redact(text), text);
});

for (const [name, text] of UNCHANGED) {
  Deno.test(`redact() leaves ${name} unchanged (defaults and entropy fallback)`, () => {
    assert.equal(redactor.redact(text), text);
    assert.equal(everything.redact(text), text);
  });
}

Deno.test("redact() hides a whole key in order behind `cat -n` as one block, nothing else", () => {
  const text = prefixed((n) => `${String(n).padStart(6)}\t`, FAKE_PKCS8.trimEnd().split("\n")) +
    "    29\tdXNlcjpwYXNzd29yZDEyMw==\n";
  assert.equal(redactor.redact(text), `     1\t${R}\n    29\tdXNlcjpwYXNzd29yZDEyMw==\n`);
});

Deno.test("redact() hides base64 lines beside a block whose DER length says lines are missing", () => {
  // The block runs BEGIN to END, but `grep -rn . | sort` moved lines 2-19
  // out of it: the DER header promises more than the block holds.
  const lines = FAKE_PKCS8.trimEnd().split("\n");
  const numbered = lines.map((line, i) => `k/id:${i + 1}:${line}`).sort();
  const out = redactor.redact(numbered.join("\n") + "\n");
  assertNoKeyMaterial(out, FAKE_PKCS8_BODY, "grep -rn | sort");
});
