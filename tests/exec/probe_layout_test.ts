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

// The suite has no sys permission for Deno.uid(): ask id(1).
const ROOT =
  new TextDecoder().decode((await new Deno.Command("id", { args: ["-u"] }).output()).stdout)
    .trim() === "0";

Deno.test({
  name:
    "probeServerUid() says why when the serving helper cannot serve: its own line, here no /proc",
  ignore: !ROOT,
  fn: async () => {
    // The real helper, started in a mount namespace whose /proc is gone: it
    // needs its own file from /proc to execute each call's init.
    const dir = await Deno.makeTempDir({ prefix: "htmcp-no-proc-" });
    const script = `${dir}/serve`;
    await Deno.writeTextFile(
      script,
      `#!/bin/sh\nexec /usr/bin/unshare -m /bin/sh -c 'umount -l /proc && exec "$0" "$@"' ` +
        `'${DEFAULT_LAUNCHER_TOOLS.spawn}' "$@"\n`,
      { mode: 0o755 },
    );
    const helper = new ServingHelper(script);
    try {
      const server = await probeServerUid(helper);
      assert.deepEqual(server, {
        ok: false,
        detail: "htmcp-spawn: /proc/self/exe: No such file or directory",
      });
      assert.equal(helper.lastWords, "htmcp-spawn: /proc/self/exe: No such file or directory");
    } finally {
      await helper.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
