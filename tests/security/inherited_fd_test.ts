/**
 * Only stdin, stdout and stderr reach a command. A server that leaves a
 * descriptor open by mistake (here: fd 7 on a 0600 secret file outside the
 * jail, opened without close-on-exec by the shell that starts the server)
 * passes it to every process it spawns; the launcher helper closes every
 * descriptor above 2 before anything of the command runs, in every mode.
 *
 * The control proves the leak is real: in the same server, a bare spawn of
 * the same shell (no helper) reads the secret through fd 7.
 */
import assert from "node:assert/strict";
import { makeJail } from "../exec/_fixtures.ts";

const SECRET = "htmcp-inherited-fd-secret-7f3a";

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`[${mode}] a descriptor the server leaks to its children cannot be read by a command`, async () => {
    const jail = await makeJail();
    const outside = await Deno.makeTempDir({ prefix: "htmcp-fd-secret-" });
    try {
      const secret = `${outside}/secret`;
      await Deno.writeTextFile(secret, SECRET, { mode: 0o600 });
      const probe = "cat <&7; echo; ls /proc/self/fd";
      const script = `
        import { createExecutor } from "${new URL("../../src/exec/mod.ts", import.meta.url)}";
        import { createRedactor } from "${new URL("../../src/redact/mod.ts", import.meta.url)}";
        import { makePolicy } from "${new URL("../_helpers/policy.ts", import.meta.url)}";
        const leaked = Deno.readLinkSync("/proc/self/fd/7");
        const bare = await new Deno.Command("/bin/sh", { args: ["-c", ${JSON.stringify(probe)}],
          stdout: "piped", stderr: "piped" }).output();
        const policy = makePolicy({ jailRoot: ${JSON.stringify(jail)}, allow: ["sh"],
          overrides: { sandbox: { mode: "${mode}", network: "none", networkAllow: [],
            acceptPathCheckOnly: ${JSON.stringify(mode === "none")}, user: null } } });
        const built = await createExecutor(policy);
        if (!built.ok) throw new Error(built.message);
        const out = await built.executor.run({ callId: "1", command: policy.allowlist.get("sh"),
          args: ["-c", ${
        JSON.stringify(probe)
      }], cwd: policy.jailRoot, redactor: createRedactor({ enabled: false, entropyFallback: false, extraPatterns: [] }) });
        await built.executor.shutdown();
        console.log(JSON.stringify({ leaked, bare: new TextDecoder().decode(bare.stdout),
          mode: built.executor.describe().mode, out }));
      `;
      // bash opens fd 7 without close-on-exec and execs the server: the
      // server holds it, and so would every child it spawns.
      const child = await new Deno.Command("/bin/bash", {
        args: [
          "-c",
          'exec 7<"$1"; exec "$2" eval --no-prompt -A "$3"',
          "bash",
          secret,
          Deno.execPath(),
          script,
        ],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(child.stdout).trim();
      assert.ok(child.success, text + new TextDecoder().decode(child.stderr));
      const result = JSON.parse(text);
      assert.equal(result.mode, mode, "the test ran in the mode it names");
      assert.equal(result.leaked, secret, "the server really holds fd 7 on the secret");
      assert.ok(result.bare.includes(SECRET), "control: a bare spawn inherits and reads fd 7");
      assert.equal(result.out.code, "OK", JSON.stringify(result.out));
      assert.ok(!result.out.stdout.includes(SECRET), "the command read the leaked descriptor");
      assert.match(result.out.stderr, /7: Bad file descriptor/);
      // ls itself opens one descriptor (3) for the listing; nothing else is open.
      const fds = result.out.stdout.trim().split("\n").slice(-4);
      assert.deepEqual(fds, ["0", "1", "2", "3"]);
    } finally {
      await Deno.remove(jail, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    }
  });
}
