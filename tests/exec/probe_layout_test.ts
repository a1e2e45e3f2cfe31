/**
 * The host's merged-/usr layout and the server's uid as the executor learns
 * them: through the launcher helper (`--dump`, a call of the serving helper),
 * since the server's own permissions cannot read the system folders' links.
 */
import assert from "node:assert/strict";
import { DEFAULT_LAUNCHER_TOOLS } from "../../src/exec/mod.ts";
import { probeServerUid } from "../../src/exec/probe.ts";
import { ServingHelper } from "../../src/exec/serving_helper.ts";
import { detectHostLayout } from "../../src/sandbox/mod.ts";

Deno.test("probeServerUid() reads the host's layout and the uid through a call of the serving helper", async () => {
  const helper = new ServingHelper(DEFAULT_LAUNCHER_TOOLS.spawn);
  try {
    const server = await probeServerUid(helper);
    assert.ok(server.ok, server.ok ? "" : server.detail);
    assert.deepEqual([...server.layout.usrSymlinks], [...detectHostLayout().usrSymlinks]);
    // Who this process is, without --allow-sys: the owner of a file it creates.
    const mine = await Deno.makeTempFile();
    const owner = await Deno.stat(mine);
    await Deno.remove(mine);
    assert.equal(server.uid, owner.uid);
    assert.equal(server.gid, owner.gid);
    assert.notEqual(helper.pid, null, "the probe spawned the serving helper, which stays");
  } finally {
    await helper.close();
  }
});

Deno.test("probeServerUid() says why when the helper cannot be spawned", async () => {
  const helper = new ServingHelper("/nonexistent/htmcp-spawn");
  const server = await probeServerUid(helper);
  assert.deepEqual(server, {
    ok: false,
    detail: "/nonexistent/htmcp-spawn is missing (run `deno task build-launcher`)",
  });
  await helper.close();
});
