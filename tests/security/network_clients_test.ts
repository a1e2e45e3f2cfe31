/**
 * Attack class (mode none, red team): tools that open files named where no
 * argument check reads them whole. curl decodes a `file:` URL's escapes
 * and expands its patterns (`file:///jail/%2e%2e/secret`), reads a config
 * file naming a `file:` URL (`-K`), and forms (`-F 'a=<file'`); wget starts
 * an askpass program before connecting anywhere; strings reads more
 * arguments from `@FILE`. Each is first shown against the raw tool, run as
 * the commands' uid, then refused through the real server with its exact
 * code: nothing ran, the secret did not come back, the attempt audited.
 */
import { equal, ok } from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";
import { assertSandboxMode, chownTree, openCanary } from "../_helpers/jail.ts";
import { asCommandUid } from "../_helpers/command_uid.ts";

const SECRET = "NETWORK-CLIENTS-HOST-SECRET";

async function refused(h: Harness, command: string, code: string) {
  const result = await h.call("run_command", { command });
  equal(result.code, code, `${command}: ${JSON.stringify(result)}`);
  equal(result.exit_code, null, "nothing ran");
  ok(!JSON.stringify(result).includes(SECRET));
  const attempt = (await h.records()).findLast((r) => r.command_raw === command);
  equal(attempt?.code, code);
}

Deno.test("none: curl file: URLs, curl -K, wget --use-askpass and strings @FILE reach no host file (red team)", async (t) => {
  const h = await startHarness({
    allow: ["ls", "cat", "tee", "curl", "wget", "strings"],
    sandbox: "none",
  });
  try {
    await t.step("the server under test runs commands unsandboxed (mode none)", async () => {
      await assertSandboxMode(h, "none");
    });
    const secret = await openCanary(h.dir, "secret.txt", `${SECRET}\n`);
    const open = secret.slice(0, secret.lastIndexOf("/"));
    const escaped = `file://${h.jail}/%2e%2e/open-to-all/secret.txt`;
    const pattern = `file://${h.jail}/{..,x}/open-to-all/secret.txt`;
    await Deno.writeTextFile(`${h.jail}/cfg`, `url = "file://${secret}"\n`);
    await Deno.writeTextFile(`${h.jail}/list`, `${secret}\n`);
    await Deno.writeTextFile(`${h.jail}/pass.sh`, `echo RAN > ${open}/askpass\n`);
    await chownTree(h.jail);

    await t.step(
      "raw: as the commands' uid, each reads the secret or runs the program",
      async () => {
        ok((await asCommandUid(["curl", "-s", escaped], h.jail)).out.includes(SECRET), "curl %2e");
        ok((await asCommandUid(["curl", "-s", pattern], h.jail)).out.includes(SECRET), "curl {..}");
        ok(
          (await asCommandUid(["curl", "-s", "-K", "cfg"], h.jail)).out.includes(SECRET),
          "curl -K",
        );
        ok(
          (await asCommandUid(["strings", "@list"], h.jail)).out.includes(SECRET),
          "strings @list",
        );
      },
    );

    await t.step("htmcp: each is refused, and nothing ran", async () => {
      await refused(h, `curl -s ${escaped}`, "PATH_ESCAPE");
      await refused(h, `curl -s '${pattern}'`, "POLICY_DENIED");
      await refused(h, "curl -s -K cfg", "POLICY_DENIED");
      await refused(h, "curl -s -F 'a=<list' http://127.0.0.1:1/", "POLICY_DENIED");
      await refused(h, "strings @list", "POLICY_DENIED");
      await refused(h, "wget -q --use-askpass=./pass.sh http://127.0.0.1:1/", "POLICY_DENIED");
      ok(!(await exists(`${open}/askpass`)), "no askpass program ran");
    });
  } finally {
    await h.close();
  }
});
