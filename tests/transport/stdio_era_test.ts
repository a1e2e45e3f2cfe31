/**
 * The era switch decides without loading the v2 SDK, so its copy of the
 * SDK's protocol-version key must stay the SDK's.
 *
 * @module
 */
import assert from "node:assert/strict";
import { PROTOCOL_VERSION_META_KEY as SDK_KEY } from "@modelcontextprotocol/server";
import { eraOfOpening, PROTOCOL_VERSION_META_KEY } from "../../src/transport/stdio_era.ts";

Deno.test("the era switch's protocol-version key is the v2 SDK's own", () => {
  assert.equal(PROTOCOL_VERSION_META_KEY, SDK_KEY);
});

Deno.test("a first request claiming the version under the SDK's key opens 2026-07-28; initialize opens 2025", () => {
  const claimed = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: { _meta: { [SDK_KEY]: "2026-07-28" } },
  };
  assert.equal(eraOfOpening(claimed), "2026-07-28");
  assert.equal(eraOfOpening({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }), "2025");
  assert.equal(eraOfOpening({ ...claimed, params: { _meta: { other: "2026-07-28" } } }), "2025");
});
