/**
 * Attack class (both modes): the server's own folder listing, raced. The
 * red team renamed a jail folder to and from a link to a host folder as
 * fast as a process can while the model sent `echo d/.*`: the server, which
 * lists with its own rights outside any sandbox, printed the host folder's
 * names (1 call in 25, under bwrap too). Through the real server and
 * client: the executor lists through its helper by descriptor, so no call
 * ever shows a host name, in either mode; the swaps it meets are refused
 * (PATH_ESCAPE) and audited.
 */
import { equal, ok } from "node:assert/strict";
import { startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, chownTree } from "../_helpers/jail.ts";
import { startRenameLoop } from "../_helpers/rename_loop.ts";

for (const mode of ["bwrap", "none"] as const) {
  Deno.test(`${mode}: a folder swapped for a link to a host folder while echo d/.* is expanded never shows the host folder`, async () => {
    const h = await startHarness({ allow: ["echo"], sandbox: mode });
    const host = `${h.dir}/host`;
    await Deno.mkdir(host);
    await Deno.writeTextFile(`${host}/.host-name-CANARY`, "");
    await Deno.mkdir(`${h.jail}/d/.inside`, { recursive: true });
    await chownTree(`${h.jail}/d`);
    const loop = await startRenameLoop(h.jail, "d", "l", host, 30);
    const outcomes = new Map<string, number>();
    try {
      await assertSandboxMode(h, mode);
      const started = Date.now();
      for (let i = 0; i < 400 && Date.now() - started < 8_000; i++) {
        const result = await h.call("run_command", { command: "echo d/.*" });
        const key = result.code === "OK" ? result.stdout.trim() : result.code;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    } finally {
      await loop.stop();
      await h.close();
    }
    const leaked = [...outcomes.keys()].filter((key) => key.includes("CANARY"));
    equal(leaked.length, 0, `a host name reached the model: ${JSON.stringify([...outcomes])}`);
    ok(outcomes.has("d/.inside"), JSON.stringify([...outcomes]));
    ok(
      outcomes.has("PATH_ESCAPE"),
      `the swaps were met and refused: ${JSON.stringify([...outcomes])}`,
    );
  });
}
