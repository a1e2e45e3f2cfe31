/**
 * Operator `extra_patterns`: each match becomes `[REDACTED:<name>]`, a named
 * group `secret` narrows the hidden part, and patterns that can match the
 * empty string cannot stall the redactor. Patterns are compiled with the
 * loader's flags, as at startup.
 */
import assert from "node:assert/strict";
import { compileExtraPattern } from "../../src/config/patterns.ts";
import type { ExtraPattern } from "../../src/config/types.ts";
import { makeRedactor } from "./_redactor.ts";

function pattern(name: string, source: string): ExtraPattern {
  const compiled = compileExtraPattern(name, source, 1);
  if (!compiled.ok) throw new Error(compiled.message);
  return compiled.value;
}

Deno.test("redact() hides every match of an operator pattern under its name", () => {
  const redactor = makeRedactor({ extraPatterns: [pattern("acme_ticket", "ACME-[0-9]{6}")] });
  assert.equal(
    redactor.redact("see ACME-123456 and ACME-654321."),
    "see [REDACTED:acme_ticket] and [REDACTED:acme_ticket].",
  );
});

Deno.test("redact() hides only the `secret` group of an operator pattern", () => {
  const redactor = makeRedactor({
    extraPatterns: [pattern("acme_db", "acme_db_pass\\s*=\\s*(?<secret>\\S+)")],
  });
  assert.equal(
    redactor.redact("acme_db_pass = s3cr3t next"),
    "acme_db_pass = [REDACTED:acme_db] next",
  );
});

Deno.test("redact() runs operator patterns alongside the built-in detectors", () => {
  const redactor = makeRedactor({ extraPatterns: [pattern("internal", "INT-[A-Z]{4}")] });
  assert.equal(
    redactor.redact("INT-ABCD AKIAIOSFODNN7EXAMPLE"),
    "[REDACTED:internal] [REDACTED:aws_access_key_id]",
  );
});

Deno.test("redact() runs several operator patterns, in policy order for the marker name", () => {
  const redactor = makeRedactor({
    extraPatterns: [pattern("first", "XY-[0-9]+"), pattern("second", "[0-9]{3}")],
  });
  assert.equal(redactor.redact("XY-123 456"), "[REDACTED:first] [REDACTED:second]");
});

Deno.test("redact() steps over empty matches of an operator pattern instead of looping", () => {
  // The loader refuses patterns that match "" on its probes; one that slips
  // past (empty only before a digit) must still terminate.
  const sneaky: ExtraPattern = { name: "sneaky", regex: /(?=[0-9])|zz/gu };
  const redactor = makeRedactor({ extraPatterns: [sneaky] });
  assert.equal(redactor.redact("a1b2 zz 🔑3"), "a1b2 [REDACTED:sneaky] 🔑3");
});

Deno.test("redact() does not let a later call see a pattern's lastIndex from an earlier one", () => {
  const redactor = makeRedactor({ extraPatterns: [pattern("code", "CODE[0-9]")] });
  assert.equal(redactor.redact("xx CODE1"), "xx [REDACTED:code]");
  assert.equal(redactor.redact("CODE2"), "[REDACTED:code]");
});
