/**
 * Secret assignments: the key stays visible and only the value is hidden, in
 * every syntax a command's output or a config file uses.
 */
import assert from "node:assert/strict";
import { makeRedactor } from "./_redactor.ts";

const redactor = makeRedactor();
const R = "[REDACTED:secret_assignment]";

const HIDDEN: ReadonlyArray<readonly [string, string, string]> = [
  ["KEY=value", "DB_PASSWORD=hunter2", `DB_PASSWORD=${R}`],
  ["export KEY='value with spaces'", "export API_KEY='abc def'", `export API_KEY='${R}'`],
  [
    'JSON "key": "value"',
    '{"password": "hunter 2", "user": "bob"}',
    `{"password": "${R}", "user": "bob"}`,
  ],
  ["compact JSON", '{"client_secret":"s3cr3t"}', `{"client_secret":"${R}"}`],
  ['escaped JSON \\"key\\":\\"value\\"', '{\\"token\\":\\"abc123\\"}', `{\\"token\\":\\"${R}\\"}`],
  ["YAML key: value", "  password: hunter2\n  user: bob", `  password: ${R}\n  user: bob`],
  ['TOML key = "value"', 'secret = "s3cr3t"', `secret = "${R}"`],
  ["--password VALUE", "mysql --password hunter2 -u root", `mysql --password ${R} -u root`],
  ["--password=VALUE", "mysql --password=hunter2 -u root", `mysql --password=${R} -u root`],
  ["--api-key 'quoted value'", "cli --api-key 'a b c'", `cli --api-key '${R}'`],
  ["Go :=", 'secret := "s3cr3t"', `secret := "${R}"`],
  ["PHP =>", "'password' => 'hunter2',", `'password' => '${R}',`],
  ["camelCase apiKey", 'apiKey: "abc123"', `apiKey: "${R}"`],
  ["camelCase clientSecret", 'clientSecret="abc123"', `clientSecret="${R}"`],
  ["an HTTP header x-api-key", "x-api-key: abc123", `x-api-key: ${R}`],
  [
    "a header inside a quoted argument",
    "curl -H 'X-Api-Key: abc 123' https://x",
    `curl -H 'X-Api-Key: ${R}' https://x`,
  ],
  [
    "a query parameter",
    "GET /cb?access_token=abc123&state=xyz",
    `GET /cb?access_token=${R}&state=xyz`,
  ],
  [
    "a connection string Password=...;",
    "Server=db;User Id=app;Password=hunter2;Database=x",
    `Server=db;User Id=app;Password=${R};Database=x`,
  ],
  ["run-together upper case", "PGPASSWORD=hunter2", `PGPASSWORD=${R}`],
  [
    "a passphrase to the end of the line",
    "passphrase: open sesame  \nnext",
    `passphrase: ${R}  \nnext`,
  ],
  ["a YAML flow mapping", "{token: abc def, user: x}", `{token: ${R}, user: x}`],
  ["a dotted key", "spring.datasource.password=hunter2", `spring.datasource.password=${R}`],
  ["an auth key", "auth=user:pass", `auth=${R}`],
  ["pwd with a value that is no path", "pwd=hunter2", `pwd=${R}`],
  ["a value after a scheme word", "token: Bearer abc123", `token: Bearer ${R}`],
  ["blanks around the separator", "password   =   hunter2", `password   =   ${R}`],
  ["a quoted literal in source code", 'const password = "hunter2";', `const password = "${R}";`],
  ["an ini file value", "[db]\npassword = hunter2\n", `[db]\npassword = ${R}\n`],
  ["an unterminated quoted value (cut output)", 'password: "hunter', `password: "${R}`],
];

for (const [name, input, expected] of HIDDEN) {
  Deno.test(`redact() hides the value of a secret key: ${name}`, () => {
    assert.equal(redactor.redact(input), expected);
  });
}

const KEPT: ReadonlyArray<readonly [string, string]> = [
  ["a key that merely contains 'token'", "tokenizer=wordpiece max_tokens=512 token_type=bearer"],
  ["author is not auth", "author=jane authored_by: bob"],
  [
    "a path to a secret is not the secret",
    "password_file=/run/secrets/db SSH_AUTH_SOCK=/tmp/ssh-x",
  ],
  ["PWD and OLDPWD in `env` output", "PWD=/home/app\nOLDPWD=/tmp\npwd: ~/src"],
  ["help text metavars", "  --password PASSWORD   the password\n  --token <token>  a token"],
  ["a flag followed by another flag", "cmd --password --verbose"],
  ["null-ish values", 'password: null\ntoken=\n"secret": true'],
  ["a comparison", 'if password == "x": pass'],
  ["prose with the word token", "The token is valid; refresh the token before it expires."],
  ["a prompt with nothing after it", "Password:\nPassword: \n"],
  ["a key at the end of a sentence", "Enter your password. Then the secret."],
  ["a C++ scope", "auth::token::verify(x)"],
  ["a nested object or list as the value", '"auth": {"type": "oauth"}, "tokens": [1, 2]'],
  [
    "references to variables and templates",
    "password=$DB_PASSWORD token: ${{ secrets.GITHUB_TOKEN }} secret=$(vault read x) key=%API_KEY%",
  ],
];

for (const [name, input] of KEPT) {
  Deno.test(`redact() leaves ${name} unchanged`, () => {
    assert.equal(redactor.redact(input), input);
  });
}

Deno.test("redact() judges keys nested inside an object value on their own", () => {
  assert.equal(
    redactor.redact('auth: {"password": "hunter2", "user": "bob"}'),
    `auth: {"password": "${R}", "user": "bob"}`,
  );
});

Deno.test("redact() hides the values of repeated and nested assignments", () => {
  assert.equal(redactor.redact("token=a token=b"), `token=${R} token=${R}`);
  assert.equal(redactor.redact("password=token=x"), `password=${R}`);
});
