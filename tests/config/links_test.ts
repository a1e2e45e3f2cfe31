/**
 * `[links]` through the real loader: defaults, a valid table, and every bad
 * value refused at startup with one sentence naming the key.
 */
import assert from "node:assert/strict";
import { assertLoaded, MINIMAL, withScratch } from "./_fixture.ts";

Deno.test("[links] defaults: on, 10 MiB, an hour, a day at most, 32 live links per caller", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(await s.load(MINIMAL));
    assert.deepEqual(policy.links, {
      enabled: true,
      maxFileBytes: 10 * 1024 * 1024,
      defaultTtlMs: 3_600_000,
      maxTtlMs: 86_400_000,
      maxLinksPerCaller: 32,
    });
  });
});

Deno.test("[links] takes every key, and a lone max_ttl_s below the default lowers the default", async () => {
  await withScratch(async (s) => {
    const policy = assertLoaded(
      await s.load(
        `${MINIMAL}[links]\nenabled = false\nmax_file_bytes = 4096\ndefault_ttl_s = 60\nmax_ttl_s = 600\nmax_links_per_caller = 3\n`,
      ),
    );
    assert.deepEqual(policy.links, {
      enabled: false,
      maxFileBytes: 4096,
      defaultTtlMs: 60_000,
      maxTtlMs: 600_000,
      maxLinksPerCaller: 3,
    });
    const lowered = assertLoaded(await s.load(`${MINIMAL}[links]\nmax_ttl_s = 600\n`));
    assert.equal(lowered.links.defaultTtlMs, 600_000);
    const raised = assertLoaded(await s.load(`${MINIMAL}[links]\ndefault_ttl_s = 172800\n`));
    assert.equal(raised.links.maxTtlMs, 172_800_000);
  });
});

Deno.test("[links] refuses bad values with a sentence naming the key", async () => {
  const cases: [string, RegExp][] = [
    ['enabled = "yes"', /links\.enabled.*true or false/],
    ["max_file_bytes = 0", /links\.max_file_bytes.*integer from 1 to 1073741824/],
    ["max_file_bytes = 1.5", /links\.max_file_bytes/],
    ["default_ttl_s = 5", /links\.default_ttl_s.*from 10/],
    ["max_ttl_s = 99999999", /links\.max_ttl_s.*to 2592000/],
    ["max_links_per_caller = 0", /links\.max_links_per_caller/],
    [
      "default_ttl_s = 700\nmax_ttl_s = 600",
      /"links\.default_ttl_s" \(700\) must not exceed "links\.max_ttl_s" \(600\)/,
    ],
    ["ttl = 5", /"links\.ttl" is not recognised/],
  ];
  await withScratch(async (s) => {
    for (const [body, pattern] of cases) {
      const result = await s.load(`${MINIMAL}[links]\n${body}\n`);
      assert.ok(!result.ok, `${body} should be refused`);
      assert.match(result.message, pattern, body);
    }
  });
});
