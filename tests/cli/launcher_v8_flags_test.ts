/**
 * `deno task htmcp` runs the launcher under the server's V8 flags: the two
 * load the same source modules, and V8 keeps one code cache per flag set,
 * so with different flags each start would compile them afresh.
 */
import assert from "node:assert/strict";
import { SERVER_V8_FLAGS } from "../../src/permissions/mod.ts";
import { REPO } from "../_helpers/stdio_harness.ts";

Deno.test("deno task htmcp starts its launcher under the server's V8 flags", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`));
  const task = String(config.tasks.htmcp);
  const words = task.split(" ");
  assert.ok(words.includes(SERVER_V8_FLAGS), task);
  assert.ok(words.indexOf(SERVER_V8_FLAGS) < words.indexOf("scripts/launch.ts"), task);
});
