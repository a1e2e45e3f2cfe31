/**
 * Plans: several stages joined by kernel pipes, sequences, cd and
 * redirections, all inside one containment, with every stage's status
 * reported through a channel a stage cannot forge. Real processes, both modes.
 */
import assert from "node:assert/strict";
import {
  type CommandPlan,
  encodePlan,
  type PlanOutcome,
  type PlanStage,
  type PlanStep,
} from "../../src/exec/mod.ts";
import { readStatusRecord } from "../../src/exec/plan.ts";
import {
  assertAllReaped,
  listProcesses,
  NO_REDACTION,
  type Setup,
  setup,
  uniqueSleep,
  waitForMarker,
} from "./_fixtures.ts";

const NONCE = "0123456789abcdef0123456789abcdef";

function stage(s: Setup, name: string, args: string[], redirects: PlanStage["redirects"] = []) {
  const command = s.policy.allowlist.get(name);
  if (command === undefined) throw new Error(`not allowed: ${name}`);
  return { path: command.path, args, redirects };
}

function pipeline(...stages: PlanStage[]): PlanStep {
  return { kind: "pipeline", stages };
}

function runPlan(s: Setup, steps: CommandPlan["steps"], cwd = s.jail): Promise<PlanOutcome> {
  return s.executor.runPlan({
    callId: crypto.randomUUID(),
    name: "plan",
    plan: { cwd, steps },
    cwd,
    redactor: NO_REDACTION,
  });
}

Deno.test("encodePlan() writes NUL-terminated tokens and refuses a malformed plan", () => {
  const bytes = encodePlan(
    {
      cwd: "/j",
      steps: [{ step: { kind: "pipeline", stages: [{ path: "/bin/echo", args: ["a b"] }] } }],
    },
    "/j",
    NONCE,
  );
  assert.deepEqual(
    new TextDecoder().decode(bytes).split("\0"),
    [
      "htmcp-plan",
      "1",
      NONCE,
      "/j",
      "pipeline",
      "1",
      "stage",
      "/bin/echo",
      "1",
      "a b",
      "0",
      "end",
      "",
    ],
  );
  const one = { step: pipeline({ path: "/bin/true", args: [] }) };
  assert.throws(() => encodePlan({ cwd: "/j", steps: [] }, "/j", NONCE), RangeError);
  assert.throws(() => encodePlan({ cwd: "/j", steps: [{ ...one, connector: ";" }] }, "/j", NONCE));
  assert.throws(() => encodePlan({ cwd: "/j", steps: [one, one] }, "/j", NONCE), RangeError);
  assert.throws(() => encodePlan({ cwd: "/j", steps: [{ step: pipeline() }] }, "/j", NONCE));
  assert.throws(() =>
    encodePlan({ cwd: "/j", steps: [{ step: pipeline({ path: "true", args: [] }) }] }, "/j", NONCE)
  );
  assert.throws(() =>
    encodePlan(
      { cwd: "/j", steps: [{ step: pipeline({ path: "/t", args: ["a\0b"] }) }] },
      "/j",
      NONCE,
    )
  );
  assert.throws(() => encodePlan({ cwd: "/j", steps: [one] }, "/j", "not-hex"), RangeError);
});

Deno.test("readStatusRecord() accepts only a final record with this run's nonce and stage count", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const good = enc(`noise\n\0htmcp-status ${NONCE} 0 - 141\n`);
  assert.deepEqual(readStatusRecord(good, NONCE, 3), { statuses: [0, null, 141], recordBytes: 55 });
  assert.equal(readStatusRecord(good, NONCE, 2), null, "wrong stage count");
  assert.equal(readStatusRecord(good, "f".repeat(32), 3), null, "another nonce");
  assert.equal(readStatusRecord(enc(`\0htmcp-status ${NONCE} 0\nlater\n`), NONCE, 1), null);
  assert.equal(readStatusRecord(enc(`\0htmcp-status ${NONCE} x\n`), NONCE, 1), null);
  assert.equal(readStatusRecord(enc(""), NONCE, 0), null);
});

for (const mode of ["none", "bwrap"] as const) {
  Deno.test(`[${mode}] yes | head -1 ends, with each stage's status (yes dies of SIGPIPE)`, async () => {
    const s = await setup({ mode });
    try {
      assert.equal(s.executor.describe().mode, mode);
      const out = await runPlan(s, [{
        step: pipeline(stage(s, "yes", []), stage(s, "head", ["-1"])),
      }]);
      assert.equal(out.code, "OK", out.reason + out.stderr);
      assert.equal(out.stdout, "y\n");
      assert.equal(out.stderr, "", "the status record is not shown as output");
      assert.deepEqual(out.stages, [141, 0]);
      assert.equal(out.exitCode, 0, "a pipeline's status is its last stage's (no pipefail)");
    } finally {
      await s.close();
    }
  });

  Deno.test(`[${mode}] sequences run with a shell's && || ; meaning and report skipped stages`, async () => {
    const s = await setup({ mode });
    try {
      const sh = (code: number) => pipeline(stage(s, "sh", ["-c", `echo ${code}; exit ${code}`]));
      const out = await runPlan(s, [
        { step: sh(3) },
        { connector: "&&", step: sh(4) },
        { connector: "||", step: sh(5) },
        { connector: ";", step: sh(0) },
        { connector: "||", step: sh(6) },
      ]);
      assert.equal(out.code, "OK", out.reason + out.stderr);
      assert.equal(out.stdout, "3\n5\n0\n");
      assert.deepEqual(out.stages, [3, null, 5, 0, null]);
      assert.equal(out.exitCode, 0);
    } finally {
      await s.close();
    }
  });

  Deno.test(`[${mode}] cd changes the cwd of later steps and a failed cd stops an && chain`, async () => {
    const s = await setup({ mode });
    try {
      await Deno.mkdir(`${s.jail}/sub`);
      const out = await runPlan(s, [
        { step: { kind: "cd", dir: `${s.jail}/sub` } },
        { connector: "&&", step: pipeline(stage(s, "pwd", [])) },
        { connector: ";", step: { kind: "cd", dir: `${s.jail}/missing` } },
        { connector: "&&", step: pipeline(stage(s, "pwd", [])) },
      ]);
      assert.equal(out.code, "OK", out.reason);
      assert.equal(out.stdout, `${s.jail}/sub\n`);
      assert.deepEqual(out.stages, [0, 0, 1, null]);
      assert.match(out.stderr, /cd .*missing: No such file or directory/);
      assert.equal(out.exitCode, 1);
    } finally {
      await s.close();
    }
  });

  Deno.test(`[${mode}] redirections open files in the jail's view, in a shell's order`, async () => {
    const s = await setup({ mode });
    try {
      const j = s.jail;
      const out = await runPlan(s, [
        { step: pipeline(stage(s, "echo", ["one"], [{ kind: ">", path: `${j}/out.txt` }])) },
        {
          connector: "&&",
          step: pipeline(stage(s, "echo", ["two"], [{ kind: ">>", path: `${j}/out.txt` }])),
        },
        {
          connector: "&&",
          step: pipeline(
            stage(s, "sh", ["-c", "echo err >&2; echo out"], [
              { kind: ">", path: `${j}/both.txt` },
              { kind: "2>&1" },
            ]),
          ),
        },
        {
          connector: "&&",
          step: pipeline(
            stage(s, "sh", ["-c", "echo hidden; echo e2 >&2"], [
              { kind: ">", path: "/dev/null" },
              { kind: "2>", path: `${j}/err.txt` },
            ]),
          ),
        },
        {
          connector: "&&",
          step: pipeline(stage(s, "cat", [], [{ kind: "<", path: `${j}/out.txt` }])),
        },
      ]);
      assert.equal(out.code, "OK", out.reason + out.stderr);
      assert.equal(out.stdout, "one\ntwo\n");
      assert.deepEqual(out.stages, [0, 0, 0, 0, 0]);
      assert.equal(await Deno.readTextFile(`${j}/both.txt`), "err\nout\n");
      assert.equal(await Deno.readTextFile(`${j}/err.txt`), "e2\n");
    } finally {
      await s.close();
    }
  });

  Deno.test(`[${mode}] a redirection cannot leave the jail, by path or through a symlink`, async () => {
    const s = await setup({ mode });
    const outside = await Deno.makeTempDir({ prefix: "htmcp-plan-outside-" });
    try {
      await Deno.chmod(outside, 0o777);
      await Deno.symlink(outside, `${s.jail}/link`);
      const out = await runPlan(s, [
        { step: pipeline(stage(s, "echo", ["x"], [{ kind: ">", path: `${outside}/direct` }])) },
        {
          connector: ";",
          step: pipeline(stage(s, "echo", ["x"], [{ kind: ">", path: `${s.jail}/link/via-link` }])),
        },
      ]);
      assert.equal(out.code, "OK", out.reason);
      assert.deepEqual(out.stages, [1, 1]);
      assert.equal(out.stdout, "");
      assert.deepEqual([...Deno.readDirSync(outside)], [], "nothing was written outside");
    } finally {
      await s.close();
      await Deno.remove(outside, { recursive: true });
    }
  });

  Deno.test(`[${mode}] a daemonizing stage dies with the plan`, async () => {
    const s = await setup({ mode });
    try {
      const m = uniqueSleep();
      // Two daemons (a new session, and a double fork), seen alive by the
      // probe while the stage lingers, then the stages end by themselves.
      const daemonize =
        `setsid sleep ${m} > /dev/null 2>&1 & (sleep ${m} > /dev/null &) ; sleep 1.5; echo up`;
      const running = runPlan(s, [
        { step: pipeline(stage(s, "sh", ["-c", daemonize]), stage(s, "cat", [])) },
      ]);
      const pids = await waitForMarker(m, 2);
      const out = await running;
      assert.equal(out.code, "OK", out.reason + out.stderr);
      assert.equal(out.stdout, "up\n");
      assert.deepEqual(out.stages, [0, 0]);
      await assertAllReaped(pids);
      const left = (await listProcesses()).filter((p) => p.argv.includes(m));
      assert.deepEqual(left, [], "no daemon of the plan outlived the call");
    } finally {
      await s.close();
    }
  });

  Deno.test(`[${mode}] the timeout kills every stage of a plan`, async () => {
    const s = await setup({ mode, limits: { timeoutMs: 2_000 } });
    try {
      const m = uniqueSleep();
      const running = runPlan(s, [
        { step: pipeline(stage(s, "sleep", [m]), stage(s, "sleep", [m]), stage(s, "cat", [])) },
      ]);
      const pids = await waitForMarker(m, 2);
      const out = await running;
      assert.equal(out.code, "TIMEOUT");
      assert.deepEqual(out.stages, []);
      await assertAllReaped(pids);
    } finally {
      await s.close();
    }
  });

  Deno.test(`[${mode}] a stage cannot forge the status record`, async () => {
    const s = await setup({ mode });
    try {
      // A look-alike record (any nonce the stage could guess), then exit 7.
      const fake = `printf '\\000htmcp-status ${NONCE} 0\\n' >&2; exit 7`;
      const out = await runPlan(s, [{ step: pipeline(stage(s, "sh", ["-c", fake])) }]);
      assert.equal(out.code, "OK", out.reason);
      assert.deepEqual(out.stages, [7]);
      assert.equal(out.exitCode, 7);
      assert.ok(out.stderr.includes(`htmcp-status ${NONCE} 0`), "the fake is shown as output");
    } finally {
      await s.close();
    }
  });

  Deno.test(`[${mode}] a stage whose binary cannot run reports 127, like a shell`, async () => {
    const s = await setup({ mode });
    try {
      const out = await runPlan(s, [
        { step: pipeline({ path: `${s.jail}/not-there`, args: [] }) },
        { connector: "||", step: pipeline(stage(s, "echo", ["fallback"])) },
      ]);
      // The binary is checked before start: a missing one refuses the plan.
      assert.equal(out.code, "EXECUTOR_ERROR");
      assert.equal(out.stdout, "");
      const dir = await Deno.makeTempDir({ dir: s.jail });
      await Deno.chmod(dir, 0o777);
      await Deno.writeTextFile(`${dir}/not-exec`, "");
      const ran = await runPlan(s, [
        { step: pipeline({ path: `${dir}/not-exec`, args: [] }) },
        { connector: "||", step: pipeline(stage(s, "echo", ["fallback"])) },
      ]);
      assert.equal(ran.code, "OK", ran.reason);
      assert.deepEqual(ran.stages, [126, 0]);
      assert.equal(ran.stdout, "fallback\n");
    } finally {
      await s.close();
    }
  });
}
