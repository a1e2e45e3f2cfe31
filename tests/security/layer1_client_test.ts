/**
 * The layer-1 path refusals through the real MCP client and the real
 * server (its launcher, generated Deno permissions and audit log), in
 * sandbox mode "none": joined paths, link creation, a link moved out and
 * read through a tree walk, tar extraction. Canaries inside and outside
 * stay as they were and every attempt is audited with its code.
 */
import { equal, match, ok } from "node:assert/strict";
import { type Harness, startHarness } from "../_helpers/stdio_harness.ts";
import { LAYER1_TOML, snapshotTree } from "./_layer1.ts";

const DEEP = "deep/a/b/c/d/e/f";
const UP7 = "../../../../../../../outside/secret.txt";

async function harness(): Promise<Harness & { outside: string }> {
  const started = await startHarness({
    allow: ["cp", "mv", "tar", "grep", "cat"],
    files: {
      "canary.txt": "inside canary\n",
      "outside/secret.txt": "inside twin\n",
      [`${DEEP}/keep`]: "",
    },
    extraToml: LAYER1_TOML,
    sandbox: "none",
  });
  const outside = `${started.dir}/outside`;
  await Deno.mkdir(outside);
  await Deno.writeTextFile(`${outside}/secret.txt`, "TOP-SECRET-OUTSIDE\n");
  ok(/mode = "none"/.test(await Deno.readTextFile(started.policyPath)), "layer 1 alone");
  return Object.assign(started, { outside });
}

async function refused(h: Harness, command: string, code: string, cwd?: string) {
  const before = await snapshotTree(h.dir, h.auditLog);
  const args = cwd === undefined ? { command } : { command, cwd };
  const result = await h.call("run_command", args);
  equal(result.code, code, `${command}: ${result.policy_reason}`);
  equal(result.exit_code, null);
  equal(JSON.stringify([...await snapshotTree(h.dir, h.auditLog)]), JSON.stringify([...before]));
  const records = await h.records();
  ok(records.some((r) => r.kind === "attempt" && r.command_raw === command && r.code === code));
  return result;
}

Deno.test("the real client: layer 1 refuses joined paths, link making, tree walks through a moved link and tar -x", async () => {
  const h = await harness();
  try {
    await refused(h, "cp --parents ../outside/secret.txt ..", "PATH_ESCAPE", "deep");
    await refused(h, "tar -C .. -cf t.tar ../outside/secret.txt", "PATH_ESCAPE", "deep");
    const link = await refused(h, `cp -s ${UP7} S`, "POLICY_DENIED", DEEP);
    match(link.policy_reason, /create links/);
    // The operator's tree holds such a link (made outside htmcp); moving it is allowed...
    await Deno.symlink(UP7, `${h.jail}/${DEEP}/S`);
    const moved = await h.call("run_command", { command: `mv ${DEEP}/S deep/a/b/c/d/e/S` });
    equal(moved.code, "OK", moved.policy_reason);
    // ...but no tool may read through it, directly or by walking the tree.
    await refused(h, "cat deep/a/b/c/d/e/S", "PATH_ESCAPE");
    const walked = await refused(h, "grep -R TOP-SECRET deep", "PATH_ESCAPE");
    match(walked.policy_reason, /leads outside the jail/);
    await refused(h, "tar -xf t.tar", "POLICY_DENIED");
    equal(await Deno.readTextFile(`${h.outside}/secret.txt`), "TOP-SECRET-OUTSIDE\n");
    equal(await Deno.readTextFile(`${h.jail}/canary.txt`), "inside canary\n");
  } finally {
    await h.close();
  }
});
