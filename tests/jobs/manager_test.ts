/**
 * The job manager's ordering: a run asked to become a job just as it ended
 * (the reply's wait gave up in the same moment) is recorded ended, with
 * `job_started` before `job_ended`, never left `running`. Real context,
 * state dir and audit log.
 */
import { deepEqual, equal } from "node:assert/strict";
import { makePolicy } from "../_helpers/policy.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { createServerContext } from "../../src/server/mod.ts";
import { jobsFor, LiveOutput, newJobId } from "../../src/jobs/mod.ts";
import { makeResult } from "../../src/tools/envelope.ts";

Deno.test("a run that ended before persist() ran is recorded ended, started then ended in the audit", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-job-manager-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    const policy = makePolicy({
      jailRoot: `${dir}/jail`,
      auditLog: `${dir}/audit.jsonl`,
      overrides: { stateDir: `${dir}/state` },
    });
    const built = await createServerContext(policy);
    if (!built.ok) throw new Error(built.message);
    const context = built.context;
    try {
      const jobs = jobsFor(context);
      if (jobs === null) throw new Error("jobs need the state dir");
      let released = 0;
      const id = newJobId();
      const job = jobs.adopt({
        id,
        owner: "local",
        clientId: null,
        callId: "call-race",
        command: "echo done",
        argv: ["echo", "done"],
        cwd: ".",
        timeoutMs: 1_000,
        startedMs: Date.now(),
        controller: new AbortController(),
        live: new LiveOutput(),
        result: Promise.resolve(
          makeResult("OK", { policyReason: "ran", startedAt: 0, stdout: "done\n", exitCode: 0 }),
        ),
        release: () => released++,
      });
      // The result has already settled; persist is asked for only now.
      await Promise.resolve();
      await job.persist("adaptive");
      await job.done;
      const record = await jobs.store.get("local", id);
      equal(record?.state, "ended");
      equal(record?.code, "OK");
      equal((await jobs.store.output("local", id))?.stdout, "done\n");
      equal(released, 1);
      const text = await Deno.readTextFile(`${dir}/audit.jsonl`);
      const events = text.split("\n").filter(Boolean).map((l) => JSON.parse(l))
        .filter((r) => r.job_id === id).map((r) => r.event);
      deepEqual(events, ["job_started", "job_ended"]);
    } finally {
      await context.close("test done");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
