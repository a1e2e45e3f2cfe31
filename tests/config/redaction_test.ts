/**
 * `[redaction] extra_patterns`: compiled at startup; a bad regex, or one that
 * can match the empty string, is a startup error.
 */
import assert from "node:assert/strict";
import { EXTRA_PATTERN_FLAGS } from "../../src/config/mod.ts";
import { assertLoaded, assertRefused, MINIMAL, withScratch } from "./_fixture.ts";

const withPattern = (name: string, regex: string) =>
  `${MINIMAL}[redaction]\nextra_patterns = [{ name = ${JSON.stringify(name)}, regex = ${
    JSON.stringify(regex)
  } }]\n`;

Deno.test("loadPolicy() compiles extra patterns with the g and u flags", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(withPattern("internal-id", "INT-[0-9]{6}")));
    const [pattern] = policy.redaction.extraPatterns;
    assert.ok(pattern);
    assert.equal(pattern.name, "internal-id");
    assert.equal(pattern.regex.flags, EXTRA_PATTERN_FLAGS);
    assert.equal(pattern.regex.source, "INT-[0-9]{6}");
    // The RegExp is usable repeatedly: a frozen global RegExp would throw here.
    assert.equal("a INT-123456 b INT-654321".replace(pattern.regex, "[X]"), "a [X] b [X]");
    assert.equal("INT-000001".replace(pattern.regex, "[X]"), "[X]");
  });
});

Deno.test("loadPolicy() refuses an extra pattern that is not a valid regex", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(withPattern("broken", "(abc")),
      'Policy key "redaction.extra_patterns[1].regex" is not a valid regular expression (JavaScript syntax, "u" flag): /(abc/gu: Unterminated group.',
    );
  });
});

Deno.test("loadPolicy() refuses a pattern that is valid only without the u flag", async () => {
  await withScratch(async (s) => {
    const result = await s.load(withPattern("loose", "\\-x"));
    assert.ok(!result.ok);
    assert.match(
      result.message,
      /^Policy key "redaction\.extra_patterns\[1\]\.regex" is not a valid regular expression \(JavaScript syntax, "u" flag\): /,
    );
  });
});

for (const regex of ["a*", "(?:)", "x?", "(?=secret)", "\\b", "^", "a|"]) {
  Deno.test(`loadPolicy() refuses the empty-matching pattern ${JSON.stringify(regex)}`, async () => {
    await withScratch(async (s) => {
      assertRefused(
        await s.load(withPattern("empty", regex)),
        `Policy key "redaction.extra_patterns[1].regex" is ${
          JSON.stringify(regex)
        }, which can match the empty string; a redaction pattern must always match at least one character.`,
      );
    });
  });
}

Deno.test("loadPolicy() refuses an extra pattern name unfit for a [REDACTED:<name>] marker", async () => {
  await withScratch(async (s) => {
    assertRefused(
      await s.load(withPattern("my secret]", "abc")),
      'Policy key "redaction.extra_patterns[1].name" is "my secret]", but a pattern name must be 1 to 64 ASCII letters, digits, "_", "." or "-".',
    );
  });
});

Deno.test("loadPolicy() numbers the failing extra pattern from 1", async () => {
  await withScratch(async (s) => {
    const toml = MINIMAL +
      '[redaction]\nextra_patterns = [{ name = "a", regex = "aa" }, { name = "b", regex = "[" }]\n';
    const result = await s.load(toml);
    assert.ok(!result.ok);
    assert.match(
      result.message,
      /^Policy key "redaction\.extra_patterns\[2\]\.regex" is not a valid/,
    );
  });
});

Deno.test("loadPolicy() applies the redaction defaults", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL));
    assert.deepEqual(policy.redaction, {
      enabled: true,
      entropyFallback: false,
      extraPatterns: [],
    });
  });
});
