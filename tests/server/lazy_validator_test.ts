/**
 * The server's JSON Schema validator, made on first use, answers as the
 * SDK's own (ajv) does: an elicitation's answer that fits its schema is
 * valid, one that does not is refused with the reason.
 */
import assert from "node:assert/strict";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { LazyJsonSchemaValidator } from "../../src/server/lazy_validator.ts";

const SCHEMA = {
  type: "object",
  properties: { decision: { type: "string", enum: ["allow", "deny"] } },
  required: ["decision"],
} as const;

Deno.test("the lazy validator accepts and refuses exactly what the SDK's ajv validator does", () => {
  const lazy = new LazyJsonSchemaValidator().getValidator(SCHEMA);
  const sdk = new AjvJsonSchemaValidator().getValidator(SCHEMA);
  for (const input of [{ decision: "allow" }, { decision: "maybe" }, {}, "allow", null]) {
    const got = lazy(input);
    const want = sdk(input);
    assert.equal(got.valid, want.valid, JSON.stringify(input));
    assert.equal(got.errorMessage, want.errorMessage, JSON.stringify(input));
  }
  assert.equal(lazy({ decision: "allow" }).valid, true);
  assert.equal(lazy({ decision: "maybe" }).valid, false);
});
