/**
 * The startup check of the launcher helper: the binary must be the one the
 * build recorded, built from the source as it is now. Real files.
 */
import assert from "node:assert/strict";
import { DEFAULT_HELPER_PATH, verifyHelper } from "../../src/exec/mod.ts";
import { sha256Hex } from "../../src/exec/spawn/helper.ts";

async function fixture() {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-helper-" });
  const binary = `${dir}/htmcp-spawn`;
  const source = `${dir}/htmcp_spawn.c`;
  const manifest = `${dir}/htmcp-spawn.sha256`;
  await Deno.copyFile(DEFAULT_HELPER_PATH, binary);
  await Deno.writeTextFile(source, "int main(void) { return 0; }\n");
  const record = {
    binary: await sha256Hex(await Deno.readFile(binary)),
    source: await sha256Hex(await Deno.readFile(source)),
  };
  await Deno.writeTextFile(manifest, JSON.stringify(record));
  return { dir, binary, source, manifest, record };
}

Deno.test("verifyHelper() accepts the helper its manifest describes", async () => {
  const f = await fixture();
  try {
    assert.deepEqual(await verifyHelper(f.binary, f.manifest, f.source), {
      ok: true,
      sha256: f.record.binary,
    });
  } finally {
    await Deno.remove(f.dir, { recursive: true });
  }
});

Deno.test("verifyHelper() refuses a changed binary, a changed source, and a bad or missing manifest", async () => {
  const f = await fixture();
  try {
    await Deno.writeTextFile(f.source, "/* edited */\n", { append: true });
    const stale = await verifyHelper(f.binary, f.manifest, f.source);
    assert.ok(!stale.ok && /built from an older/.test(stale.detail), JSON.stringify(stale));

    await Deno.writeFile(f.binary, new Uint8Array([0x7f, 0x45, 0x4c, 0x46]));
    const swapped = await verifyHelper(f.binary, f.manifest, "");
    assert.ok(!swapped.ok && /has SHA-256 [0-9a-f]{64}, not the/.test(swapped.detail));

    await Deno.writeTextFile(f.manifest, '{"binary":"zz"}');
    const bad = await verifyHelper(f.binary, f.manifest, "");
    assert.ok(!bad.ok && /manifest .* is missing or invalid/.test(bad.detail));

    await Deno.remove(f.manifest);
    const gone = await verifyHelper(f.binary, f.manifest, "");
    assert.ok(!gone.ok && /manifest .* is missing or invalid/.test(gone.detail));

    const missing = await verifyHelper(`${f.dir}/nope`, f.manifest, "");
    assert.ok(!missing.ok && /nope is missing/.test(missing.detail));
  } finally {
    await Deno.remove(f.dir, { recursive: true });
  }
});
