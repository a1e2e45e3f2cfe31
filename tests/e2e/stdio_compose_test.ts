/**
 * Composed commands through the real MCP client over stdio: pipelines,
 * sequences, redirections, a leading `cd` and globs give what a shell would,
 * and every refused construct is refused with the stage named, nothing ran
 * (canaries), and the attempt audited with the whole plan.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";

const ALLOW = [
  "ls",
  "cat",
  "grep",
  "sort",
  "head",
  "seq",
  "awk",
  "echo",
  "true",
  "false",
  "yes",
  "touch",
  "wc",
];
const FILES = {
  "src/a.txt": "x one\nb\nx two\n",
  "src/b.txt": "x three\n",
  "sub/inner.txt": "inner\n",
  "in.txt": "c\na\nb\n",
  "f": "alpha beta\ngamma delta\n",
  "notes.txt": "n\n",
};

async function withHarness(fn: (harness: Harness) => Promise<void>) {
  const harness = await startHarness({ allow: ALLOW, files: FILES });
  try {
    await fn(harness);
  } finally {
    await harness.close();
  }
}

async function attempts(harness: Harness) {
  return (await harness.records()).filter((record) => record.kind === "attempt");
}

Deno.test("composed commands give the results a shell would, through the real client", async () => {
  await withHarness(async (harness) => {
    const cases: [string, string][] = [
      [
        "grep -rn x src | sort | head -3",
        "src/a.txt:1:x one\nsrc/a.txt:3:x two\nsrc/b.txt:1:x three\n",
      ],
      ["cd sub && ls", "inner.txt\n"],
      ["ls *.txt", "in.txt\nnotes.txt\n"],
      ["awk '{print $1}' f", "alpha\ngamma\n"],
      ["seq 1 5 > out.txt && cat out.txt", "1\n2\n3\n4\n5\n"],
      ["sort < in.txt", "a\nb\nc\n"],
      ["false || echo fallback", "fallback\n"],
      ["true && echo yes ; echo always", "yes\nalways\n"],
      ["grep 'x t' src/a.txt src/b.txt | wc -l", "2\n"],
    ];
    for (const [command, stdout] of cases) {
      const result = await harness.call("run_command", { command });
      equal(result.code, "OK", `${command}: ${result.policy_reason} ${result.stderr}`);
      equal(result.stdout, stdout, command);
    }
    const piped = await harness.call("run_command", { command: "cat f | grep gamma | wc -l" });
    deepEqual(piped.stages?.map((stage) => stage.exit_code), [0, 0, 0]);
    deepEqual(piped.stages?.map((stage) => stage.argv[0]), ["cat", "grep", "wc"]);
    const skipped = await harness.call("run_command", { command: "false && echo no" });
    deepEqual(skipped.stages?.map((stage) => stage.exit_code), [1, null]);
    equal(skipped.exit_code, 1);
  });
});

Deno.test("a pipeline's attempt record holds the whole plan before it ran, and its outcome every stage", async () => {
  await withHarness(async (harness) => {
    const result = await harness.call("run_command", { command: "seq 1 3 | sort -r > rev.txt" });
    equal(result.code, "OK", result.policy_reason);
    equal(await Deno.readTextFile(`${harness.jail}/rev.txt`), "3\n2\n1\n");
    const records = await harness.records();
    const attempt = records.findLast((record) => record.kind === "attempt");
    const outcome = records.findLast((record) => record.kind === "outcome");
    deepEqual(attempt?.plan, [
      { joined: null, argv: ["seq", "1", "3"], redirects: [] },
      { joined: "|", argv: ["sort", "-r"], redirects: [`> ${harness.jail}/rev.txt`] },
    ]);
    ok((attempt?.seq as number) < (outcome?.seq as number));
    deepEqual(outcome?.stages, [0, 0]);
  });
});

Deno.test("refused compositions name the stage, run nothing and are audited", async () => {
  await withHarness(async (harness) => {
    await Deno.writeTextFile(`${harness.dir}/outside.txt`, "secret\n");
    Deno.symlinkSync(`${harness.dir}/outside.txt`, `${harness.jail}/link.txt`);
    const cases: [string, string, RegExp][] = [
      ["cat f | sh", "POLICY_DENIED", /^Stage 2 \("sh"\):/],
      ["touch canary && cat f | python3", "POLICY_DENIED", /^Stage 3 \("python3"\)/],
      ["ls > /etc/x", "PATH_ESCAPE", /redirection target "\/etc\/x"/],
      ["ls > ../x", "PATH_ESCAPE", /redirection target "\.\.\/x"/],
      ["ls *", "PATH_ESCAPE", /link\.txt/],
      ["cd / && ls", "CWD_ESCAPE", /^"cd \/":/],
      ["cd .. && ls", "CWD_ESCAPE", /^"cd \.\.":/],
      ["touch canary; echo $HOME", "POLICY_DENIED", /"\$"/],
      ["touch canary & ls", "POLICY_DENIED", /background/],
      ["touch canary && VAR=x ls", "POLICY_DENIED", /environment assignment/],
      ["touch canary | cat <(ls)", "POLICY_DENIED", /process substitution/],
    ];
    for (const [command, code, reason] of cases) {
      const before = (await attempts(harness)).length;
      const result = await harness.call("run_command", { command });
      equal(result.code, code, `${command}: ${result.policy_reason}`);
      match(result.policy_reason, reason, command);
      const after = await attempts(harness);
      equal(after.length, before + 1, command);
      const last = after[after.length - 1];
      equal(last?.verdict, "deny", command);
      equal(last?.code, code, command);
      equal(last?.command_raw, command);
    }
    ok(!(await exists(`${harness.jail}/canary`)), "a stage ran before the plan was refused");
    ok(!(await exists(`${harness.dir}/x`)));
  });
});

Deno.test("pipelines stay contained: yes | head ends, the timeout kills every stage", async () => {
  const harness = await startHarness({
    allow: ALLOW.concat(["sleep"]),
    extraToml: "[limits]\ntimeout_ms = 1500\n",
  });
  try {
    const yes = await harness.call("run_command", { command: "yes | head -1" });
    equal(yes.code, "OK", yes.policy_reason);
    equal(yes.stdout, "y\n");
    const started = performance.now();
    const slow = await harness.call("run_command", { command: "sleep 30 | sleep 30 && sleep 30" });
    equal(slow.code, "TIMEOUT", slow.policy_reason);
    ok(performance.now() - started < 20_000);
  } finally {
    await harness.close();
  }
});

Deno.test("explain_command shows a plan's stages and the same verdict run_command reaches", async () => {
  await withHarness(async (harness) => {
    const allowed = await harness.call("explain_command", { command: "grep -rn x src | sort" });
    equal(allowed.code, "OK");
    match(allowed.policy_reason, /2 command\(s\) \(grep \| sort\)/);
    deepEqual(allowed.stages, [
      { argv: ["grep", "-rn", "x", "src"], exit_code: null },
      { argv: ["sort"], exit_code: null },
    ]);
    const refused = await harness.call("explain_command", { command: "ls | sh" });
    equal(refused.code, "POLICY_DENIED");
    match(refused.policy_reason, /^Stage 2 \("sh"\)/);
  });
});
