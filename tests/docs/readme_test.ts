/**
 * The README is a contract: its result-code table and the version must stay
 * true to the code.
 */
import assert from "node:assert/strict";
import { RESULT_CODE_MEANINGS, RESULT_CODES } from "../../src/result/codes.ts";
import { VERSION } from "../../src/version.ts";
import { REPO } from "../_helpers/stdio_harness.ts";

Deno.test("the README's result-code table lists every code with its exact meaning, in order", async () => {
  const readme = await Deno.readTextFile(`${REPO}README.md`);
  const start = readme.indexOf("<!-- result-codes:start -->");
  const end = readme.indexOf("<!-- result-codes:end -->");
  assert.ok(start !== -1 && end > start, "README has the result-code markers");
  // deno fmt pads table cells, so cells are trimmed before comparing.
  const rows = readme.slice(start, end).split("\n").filter((line) => line.startsWith("| `"));
  const table = rows.map((row) => {
    const [code, meaning] = row.split("|").slice(1, 3).map((cell) => cell.trim());
    return [code?.replaceAll("`", ""), meaning];
  });
  assert.deepEqual(table, RESULT_CODES.map((code) => [code, RESULT_CODE_MEANINGS[code]]));
});

Deno.test("the CLI version equals deno.json's version", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${REPO}deno.json`));
  assert.equal(VERSION, config.version);
});
