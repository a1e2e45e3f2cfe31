/**
 * The protocol era changes the wire, never the verdict: the same script of
 * calls (every tool the server lists, and each refusal a model can reach
 * with one call) gives the same result codes through the SDK v2 client in
 * the 2025 handshake era and in the stateless 2026-07-28 era, over stdio,
 * with nothing of a refused command run (a canary outside the jail).
 */
import assert from "node:assert/strict";
import { type Era, startV2Stdio } from "./_v2_clients.ts";
import { assertScriptCodes, eraScript } from "./_era_script.ts";
import { openCanary } from "../_helpers/jail.ts";

async function overStdio(era: Era): Promise<Record<string, string>> {
  const harness = await startV2Stdio(era, {
    allow: ["echo", "sleep", "cat", "ls"],
    extraToml: ["[limits]", "max_output_bytes = 64", "[audit]", "expose_to_model = true", ""]
      .join("\n"),
  });
  const canary = await openCanary(harness.dir, "outside-canary", "untouched");
  try {
    return await eraScript(harness.client, canary);
  } finally {
    await harness.close();
  }
}

Deno.test("stdio, both eras: every tool and every one-call refusal give the same codes through the v2 client", async () => {
  const legacy = await overStdio("2025");
  const modern = await overStdio("2026-07-28");
  assert.deepEqual(modern, legacy);
  assertScriptCodes(legacy);
});
