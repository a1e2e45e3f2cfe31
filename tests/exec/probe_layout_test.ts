/**
 * The host's merged-/usr layout as the executor learns it: through the
 * launcher helper (`--dump`), since the server's own permissions cannot read
 * the system folders' links.
 */
import assert from "node:assert/strict";
import { DEFAULT_LAUNCHER_TOOLS } from "../../src/exec/mod.ts";
import { probeServerUid } from "../../src/exec/probe.ts";
import { detectHostLayout } from "../../src/sandbox/mod.ts";

Deno.test("probeServerUid() reads the host's layout through the helper, as detectHostLayout() does", async () => {
  const server = await probeServerUid(DEFAULT_LAUNCHER_TOOLS.spawn);
  assert.ok(server.ok, server.ok ? "" : server.detail);
  assert.deepEqual([...server.layout.usrSymlinks], [...detectHostLayout().usrSymlinks]);
});
