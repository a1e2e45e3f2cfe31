import assert from "node:assert/strict";
import type { SandboxMode } from "../../src/config/types.ts";
import { NO_REDACTION, setup } from "./_fixtures.ts";
import { exists } from "../_helpers/exists.ts";

/** A go the test gives (or refuses) when it chooses. */
function gate(): { go: Promise<boolean>; give: (ok: boolean) => void } {
  let give: (ok: boolean) => void = () => {};
  const go = new Promise<boolean>((resolve) => (give = resolve));
  return { go, give };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** `sh -c script` in the jail, started on `go`. */
function shOnGo(s: Setup, script: string, go: Promise<boolean>) {
  return s.executor.run({
    callId: crypto.randomUUID(),
    command: s.policy.allowlist.get("sh")!,
    args: ["-c", script],
    cwd: s.jail,
    redactor: NO_REDACTION,
    go,
  });
}

for (const mode of ["none", "bwrap"] as const satisfies readonly SandboxMode[]) {
  Deno.test(`${mode}: a command waits for its go: nothing runs before it, and it runs once given`, async () => {
    const s = await setup({ mode });
    try {
      const canary = `${s.jail}/canary-go`;
      const { go, give } = gate();
      const run = shOnGo(s, `echo ran > ${canary}; echo out`, go);
      // Time for the launcher (and bwrap) to set up and reach the wait.
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await exists(canary), false, "the command ran before its go");
      give(true);
      const out = await run;
      assert.equal(out.code, "OK");
      assert.equal(out.exitCode, 0);
      assert.equal(out.stdout, "out\n");
      assert.equal(await exists(canary), true);
    } finally {
      await s.close();
    }
  });

  Deno.test(`${mode}: a refused go ends the run having executed nothing (CANCELLED)`, async () => {
    const s = await setup({ mode });
    try {
      const canary = `${s.jail}/canary-nogo`;
      const { go, give } = gate();
      const run = shOnGo(s, `echo ran > ${canary}`, go);
      await new Promise((resolve) => setTimeout(resolve, 100));
      give(false);
      const out = await run;
      assert.equal(out.code, "CANCELLED");
      assert.match(out.reason, /stopped before "sh" started/);
      assert.equal(await exists(canary), false, "the command ran without its go");
    } finally {
      await s.close();
    }
  });

  Deno.test(`${mode}: after the go the command gets its stdin text, or /dev/null without one`, async () => {
    const s = await setup({ mode });
    try {
      const withText = await s.executor.run({
        callId: crypto.randomUUID(),
        command: s.policy.allowlist.get("cat")!,
        args: [],
        cwd: s.jail,
        redactor: NO_REDACTION,
        stdin: new TextEncoder().encode("gg\nline two\n"),
        go: Promise.resolve(true),
      });
      assert.equal(withText.code, "OK");
      // The go byte is the helper's, never the command's: the text is intact.
      assert.equal(withText.stdout, "gg\nline two\n");
      const without = await shOnGo(
        s,
        "cat; test -c /dev/stdin && echo char-device",
        Promise.resolve(true),
      );
      assert.equal(without.code, "OK");
      assert.equal(without.stdout, "char-device\n", without.stderr);
    } finally {
      await s.close();
    }
  });
}
