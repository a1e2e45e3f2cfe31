import assert from "node:assert/strict";
import { processEnv } from "../../src/cli/env.ts";

Deno.test("processEnv() answers get, in and Object.hasOwn for a set variable", () => {
  Deno.env.set("HTMCP_TEST_ENV_VIEW", "value");
  try {
    const env = processEnv();
    assert.equal(env["HTMCP_TEST_ENV_VIEW"], "value");
    assert.ok("HTMCP_TEST_ENV_VIEW" in env);
    assert.ok(Object.hasOwn(env, "HTMCP_TEST_ENV_VIEW"));
  } finally {
    Deno.env.delete("HTMCP_TEST_ENV_VIEW");
  }
});

Deno.test("processEnv() reports an unset variable and inherited names as absent", () => {
  const env = processEnv();
  assert.equal(env["HTMCP_TEST_SURELY_UNSET"], undefined);
  assert.equal(Object.hasOwn(env, "HTMCP_TEST_SURELY_UNSET"), false);
  assert.equal(Object.hasOwn(env, "constructor"), false);
  assert.equal(env["__proto__" as string], undefined);
});
