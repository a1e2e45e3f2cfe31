/**
 * Structured input through the real MCP client over stdio: `argv` is one
 * command taken word for word (never tokenized, never globbed), `stdin` text
 * reaches the command and is audited as its length and SHA-256 only, and
 * every malformed combination is refused with nothing run and the attempt
 * audited.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";

const ALLOW = ["cat", "grep", "sort", "echo", "touch", "wc", "ls"];
const FILES = { "f": "a b\nab\na\n", "x.txt": "x\n" };

async function withHarness(fn: (harness: Harness) => Promise<void>) {
  const harness = await startHarness({ allow: ALLOW, files: FILES });
  try {
    // The results below must come from the kernel sandbox, not from a
    // temp folder that silently ran without it.
    match((await harness.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    await fn(harness);
  } finally {
    await harness.close();
  }
}

async function attempts(harness: Harness) {
  return (await harness.records()).filter((record) => record.kind === "attempt");
}

function sha256Hex(text: string): Promise<string> {
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)).then((digest) =>
    Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("")
  );
}

Deno.test("argv is judged and run word for word: a word with a space stays one word", async () => {
  await withHarness(async (harness) => {
    const result = await harness.call("run_command", { argv: ["grep", "a b", "f"] });
    equal(result.code, "OK", result.policy_reason);
    equal(result.stdout, "a b\n");
    // The same words as text split at the space: grep looks for "a" in "b" and "f".
    const text = await harness.call("run_command", { command: "grep a b f" });
    match(text.stderr, /b: No such file/);
    const last = (await attempts(harness)).at(-2);
    deepEqual(last?.argv, ["grep", "a b", "f"]);
    equal(last?.command_raw, JSON.stringify(["grep", "a b", "f"]));
  });
});

Deno.test("argv words are never parsed: |, * and quotes are plain characters", async () => {
  await withHarness(async (harness) => {
    const result = await harness.call("run_command", { argv: ["echo", "a|b", "*.txt", "'q'"] });
    equal(result.code, "OK", result.policy_reason);
    equal(result.stdout, "a|b *.txt 'q'\n");
    equal(result.stages, undefined);
  });
});

Deno.test("argv gets the full policy: a denylisted command and a path escape are refused, nothing ran", async () => {
  await withHarness(async (harness) => {
    await Deno.writeTextFile(`${harness.dir}/outside.txt`, "secret\n");
    const cases: [string[], string, RegExp][] = [
      [["sh", "-c", "touch canary"], "POLICY_DENIED", /"sh"/],
      [["cat", `${harness.dir}/outside.txt`], "PATH_ESCAPE", /outside\.txt/],
      [["touch", "../canary"], "PATH_ESCAPE", /\.\.\/canary/],
    ];
    for (const [argv, code, reason] of cases) {
      const before = (await attempts(harness)).length;
      const result = await harness.call("run_command", { argv });
      equal(result.code, code, `${argv}: ${result.policy_reason}`);
      match(result.policy_reason, reason);
      equal(result.stdout, "");
      const after = await attempts(harness);
      equal(after.length, before + 1);
      equal(after.at(-1)?.verdict, "deny");
      equal(after.at(-1)?.code, code);
    }
    ok(!(await exists(`${harness.jail}/canary`)));
    ok(!(await exists(`${harness.dir}/canary`)));
  });
});

Deno.test("stdin text reaches sort and cat; the audit holds its length and SHA-256, never its content", async () => {
  await withHarness(async (harness) => {
    const input = "zebra-7731\napple-7731\nmango-7731\n";
    const sorted = await harness.call("run_command", { command: "sort", stdin: input });
    equal(sorted.code, "OK", sorted.policy_reason);
    equal(sorted.stdout, "apple-7731\nmango-7731\nzebra-7731\n");
    const cat = await harness.call("run_command", { argv: ["cat"], stdin: "héllo\n" });
    equal(cat.stdout, "héllo\n");
    const counted = await harness.call("run_command", { command: "wc -c" });
    // Without stdin text the command reads /dev/null.
    equal(counted.stdout.trim(), "0");

    const all = await attempts(harness);
    deepEqual(all.at(-3)?.stdin, { bytes: input.length, sha256: await sha256Hex(input) });
    deepEqual(all.at(-2)?.stdin, { bytes: 7, sha256: await sha256Hex("héllo\n") });
    equal(all.at(-1)?.stdin, undefined);
    const log = await Deno.readTextFile(harness.auditLog);
    ok(!log.includes("zebra-7731"), "the audit log holds the stdin content");
  });
});

Deno.test("a command that never reads its stdin ends normally", async () => {
  await withHarness(async (harness) => {
    const result = await harness.call("run_command", {
      command: "echo done",
      stdin: "y\n".repeat(400_000),
    });
    equal(result.code, "OK", result.policy_reason);
    equal(result.stdout, "done\n");
  });
});

Deno.test("malformed structured input is refused, runs nothing and is audited", async () => {
  await withHarness(async (harness) => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { command: "touch canary", argv: ["touch", "canary"] },
        /either "command".*or "argv".*not both/,
      ],
      [{ cwd: "." }, /Give "command" \(text\) or "argv"/],
      [
        { command: "touch canary && cat", stdin: "x" },
        /stdin is accepted for one plain command only/,
      ],
      [{ command: "touch canary", stdin: "x".repeat(1_048_577) }, /limit of 1048576 bytes/],
    ];
    for (const [args, reason] of cases) {
      const before = (await attempts(harness)).length;
      const result = await harness.call("run_command", args);
      equal(
        result.code,
        "POLICY_DENIED",
        `${JSON.stringify(args).slice(0, 80)}: ${result.policy_reason}`,
      );
      match(result.policy_reason, reason);
      const after = await attempts(harness);
      equal(after.length, before + 1);
      equal(after.at(-1)?.verdict, "deny");
      equal(after.at(-1)?.code, "POLICY_DENIED");
    }
    ok(!(await exists(`${harness.jail}/canary`)), "a refused call ran");
  });
});

Deno.test("explain_command judges argv word for word, as run_command would", async () => {
  await withHarness(async (harness) => {
    const allowed = await harness.call("explain_command", { argv: ["grep", "a b", "f"] });
    equal(allowed.code, "OK", allowed.policy_reason);
    const refused = await harness.call("explain_command", { argv: ["rm", "-rf", "."] });
    equal(refused.code, "POLICY_DENIED");
    const both = await harness.call("explain_command", { command: "ls", argv: ["ls"] });
    equal(both.code, "POLICY_DENIED");
    match(both.policy_reason, /not both/);
  });
});
