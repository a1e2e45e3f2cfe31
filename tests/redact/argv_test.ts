/**
 * `redactArgv`: the audit log's view of argv, where a flag and its secret
 * are two separate words.
 */
import assert from "node:assert/strict";
import { redactArgv } from "../../src/redact/mod.ts";
import { FAKE, makeRedactor } from "./_redactor.ts";

const redactor = makeRedactor();
const R = "[REDACTED:secret_assignment]";

Deno.test("redactArgv() hides the word after a flag that names a secret", () => {
  assert.deepEqual(
    redactArgv(redactor, ["mysql", "--password", "hunter2", "-u", "root"]),
    ["mysql", "--password", R, "-u", "root"],
  );
  assert.deepEqual(redactArgv(redactor, ["cli", "-token", "abc", "x"]), ["cli", "-token", R, "x"]);
  assert.deepEqual(redactArgv(redactor, ["cli", "--api-key", "k"]), ["cli", "--api-key", R]);
});

Deno.test("redactArgv() redacts each word on its own too", () => {
  assert.deepEqual(
    redactArgv(redactor, ["curl", "-H", `Authorization: Bearer ${FAKE.jwt}`, "--password=pw"]),
    ["curl", "-H", "Authorization: Bearer [REDACTED:jwt]", `--password=${R}`],
  );
  assert.deepEqual(redactArgv(redactor, ["echo", FAKE.githubClassic]), [
    "echo",
    "[REDACTED:github_token]",
  ]);
});

Deno.test("redactArgv() leaves short flags, other flags and a trailing secret flag alone", () => {
  const argv = ["cp", "-p", "a", "b", "--token-file", "t.txt", "--verbose", "--password"];
  assert.deepEqual(redactArgv(redactor, argv), argv);
  assert.deepEqual(redactArgv(redactor, ["cmd", "--password", "--verbose"]), [
    "cmd",
    "--password",
    "--verbose",
  ]);
});

Deno.test("redactArgv() returns a new array and changes nothing when redaction is disabled", () => {
  const argv = Object.freeze(["mysql", "--password", "hunter2"]);
  const out = redactArgv(makeRedactor({ enabled: false }), argv);
  assert.deepEqual(out, ["mysql", "--password", "hunter2"]);
  assert.notEqual(out, argv);
});
