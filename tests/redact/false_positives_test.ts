/**
 * Ordinary output that must come through unchanged, with every detector on
 * (entropy fallback included) and with the defaults. Each case is a kind of
 * text a model reads all day; a false positive there hides information the
 * model needs and teaches operators to switch redaction off.
 */
import assert from "node:assert/strict";
import { makeRedactor } from "./_redactor.ts";

const defaults = makeRedactor();
const everything = makeRedactor({ entropyFallback: true });

const ORDINARY: ReadonlyArray<readonly [string, string]> = [
  [
    "absolute and relative paths",
    "/usr/lib/x86_64-linux-gnu/libQt5Core.so.5 /home/alice/.config/Code/User/settings.json " +
    "src/redact/assignment_detector.ts ~/Projects/MyService2024/BackendApiGateway/src ./node_modules/.bin/tsc",
  ],
  [
    "git SHAs, 40 and 64 hex",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b\n" +
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n" +
    "Merge: 1a2b3c4 5d6e7f8",
  ],
  [
    "UUIDs",
    "request 550e8400-e29b-41d4-a716-446655440000 trace=6F9619FF-8B86-D011-B42D-00C04FC964FF",
  ],
  [
    "tool errors on files named like secrets (error(3) format)",
    "cat: credentials: No such file or directory\n" +
    "ls: cannot access 'token': No such file or directory\n" +
    "grep: password: Is a directory\nhead: secret: Permission denied",
  ],
  ["cp -p and other short flags", "cp -p -r a b && tar -czpf x.tgz dir && mysql -u root -p"],
  [
    "base64 of ordinary text under the length threshold",
    "SGVsbG8sIHdvcmxkIQ== aGVsbG8gdGhlcmUgZnJpZW5k dXNlcjpuYW1l",
  ],
  [
    "version strings",
    "v1.2.3 2.0.0-rc.1+build.5 deno 2.9.6 (stable, release, x86_64-unknown-linux-gnu)",
  ],
  [
    "ISO dates and times",
    "2024-11-29T09:15:00Z 2024-11-29 09:15:00.123456+01:00 Fri, 29 Nov 2024 09:15:00 GMT",
  ],
  [
    "prose about tokens and passwords",
    "The token is valid until it expires. Reset your password from the account page; " +
    "secrets are never logged. Use an API key or an auth token, see the docs.",
  ],
  [
    "`ls -la` output",
    [
      "total 48",
      "drwxr-xr-x  5 root root  4096 Nov 29 09:15 .",
      "drwxr-xr-x 21 root root  4096 Nov 29 08:57 ..",
      "-rw-r--r--  1 root root  4805 Nov 29 09:15 helper-brief.md",
      "-rw-------  1 app  app    411 Nov 29 09:16 secrets.toml",
      "-rw-r--r--  1 app  app   1200 Nov 29 09:16 password_reset.html",
      "lrwxrwxrwx  1 root root    23 Nov 29 09:16 token.ts -> ../auth/token_store.ts",
      "drwxr-xr-x  2 root root  4096 Nov 29 09:16 api_key_rotation",
    ].join("\n"),
  ],
  [
    "`env` output without secrets",
    "PATH=/usr/local/bin:/usr/bin:/bin\nHOME=/home/app\nPWD=/srv/app\nLANG=C.UTF-8\nSHLVL=1\nTERM=xterm-256color",
  ],
  [
    "source code that names secrets without values",
    [
      "const token = await getToken(options);",
      'if (!password) throw new Error("missing password");',
      "export function redactSecret(secretName: string): void {}",
      "self.api_key = api_key",
      "private readonly accessKey: string;",
      "token = self.token",
      "password = config.password",
      "secret = load_secret(path)",
    ].join("\n"),
  ],
  [
    "source that mentions a PEM header",
    'if (line.startsWith("-----BEGIN PRIVATE KEY-----")) return "key";',
  ],
  [
    "URLs without a password",
    "https://user@example.com/path?q=1 git@github.com:org/repo.git http://[::1]:8080/",
  ],
  ["e-mail addresses", "Author: Jane Developer <jane@example.com>, bob@host:/srv"],
  [
    "long identifiers",
    "handleIncomingWebSocketConnectionRequest SOME_VERY_LONG_CONSTANT_NAME_FOR_CONFIG_2",
  ],
  [
    "npm and Python package names",
    "@types/node sk-learn-compat scikit-learn==1.5.0 npm_config_cache=/tmp/npm",
  ],
  [
    "markers of an earlier redaction",
    "token=[REDACTED:github_token] Authorization: Bearer [REDACTED:authorization]",
  ],
];

Deno.test("redact() leaves a PEM public key unchanged (defaults; entropy would hide its base64)", () => {
  const text =
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----";
  assert.equal(defaults.redact(text), text);
});

for (const [name, text] of ORDINARY) {
  Deno.test(`redact() leaves ${name} unchanged (defaults)`, () => {
    assert.equal(defaults.redact(text), text);
  });
  Deno.test(`redact() leaves ${name} unchanged (entropy fallback on)`, () => {
    assert.equal(everything.redact(text), text);
  });
}
