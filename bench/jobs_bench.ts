/**
 * Memory held by background jobs: N jobs started through `runCommandTool`
 * (the real policy, audit log, executor and kernel sandbox), each printing
 * about 1 MiB and then sleeping, so their output is held in the executor's
 * captures while they run. Reports the server's RSS before, while all run,
 * and after they were cancelled (their output then on disk in the job
 * store), and the time to start them. Reported, never asserted.
 *
 * `deno run --allow-all bench/jobs_bench.ts [N]` (default 100).
 *
 * @module
 */
import { loadPolicy } from "../src/config/mod.ts";
import { createServerContext } from "../src/server/mod.ts";
import { runCommandTool } from "../src/tools/run_command.ts";
import { jobCancelTool, jobListTool } from "../src/tools/job_tools.ts";
import { STDIO_CALLER } from "../src/tools/caller.ts";
import { prepareJail } from "../scripts/_jail.ts";

export interface JobsFigures {
  readonly jobs: number;
  readonly startMsPerJob: number;
  readonly rssIdleMiB: number;
  readonly rssRunningMiB: number;
  readonly rssAfterMiB: number;
  readonly storedBytesPerJob: number;
}

const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

/** Starts `n` background jobs of ~1 MiB output each and measures the memory they hold. */
export async function measureJobs(n: number): Promise<JobsFigures> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-jobs-bench-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    const policyFile = `${dir}/policy.toml`;
    await Deno.writeTextFile(
      policyFile,
      [
        'jail_root = "jail"',
        'audit_log = "audit.jsonl"',
        'state_dir = "state"',
        "[allowlist]",
        'commands = ["sh", "seq", "sleep"]',
        "[limits]",
        `max_concurrent = ${Math.min(256, n)}`,
        "timeout_ms = 120000",
        '[sandbox]\nmode = "bwrap"',
      ].join("\n") + "\n",
    );
    const loaded = await loadPolicy({ policyFile, env: {} });
    if (!loaded.ok) throw new Error(loaded.message);
    const built = await createServerContext(loaded.policy);
    if (!built.ok) throw new Error(built.message);
    const context = built.context;
    try {
      const rssIdle = Deno.memoryUsage().rss;
      const started = performance.now();
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        // seq 1 150000 prints 1 038 894 bytes.
        const result = await runCommandTool(context, STDIO_CALLER, {
          command: "sh -c 'seq 1 150000; sleep 60'",
          background: true,
        });
        if (result.code !== "JOB_RUNNING") {
          throw new Error(`${result.code}: ${result.policy_reason}`);
        }
        ids.push(result.job_id as string);
      }
      const startMs = (performance.now() - started) / n;
      // Until every job has printed its megabyte (the record's byte count says so).
      for (let round = 0; round < 120; round++) {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const listed = await jobListTool(context, STDIO_CALLER);
        if ((listed.jobs ?? []).every((j) => j.stdout_bytes >= 1_038_894)) break;
      }
      const rssRunning = Deno.memoryUsage().rss;
      for (const id of ids) await jobCancelTool(context, STDIO_CALLER, { job_id: id });
      (globalThis as { gc?: () => void }).gc?.();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const rssAfter = Deno.memoryUsage().rss;
      let stored = 0;
      for await (const entry of Deno.readDir(`${dir}/state/job_output`)) {
        if (entry.isFile) stored += (await Deno.stat(`${dir}/state/job_output/${entry.name}`)).size;
      }
      return {
        jobs: n,
        startMsPerJob: Math.round(startMs * 100) / 100,
        rssIdleMiB: mib(rssIdle),
        rssRunningMiB: mib(rssRunning),
        rssAfterMiB: mib(rssAfter),
        storedBytesPerJob: Math.round(stored / n),
      };
    } finally {
      await context.close("bench finished");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) {
  const n = Number(Deno.args[0] ?? 100);
  const figures = await measureJobs(n);
  console.log(`background jobs with ~1 MiB of output each (n = ${figures.jobs})`);
  console.log(`  start: ${figures.startMsPerJob} ms per job (judged, audited, started, recorded)`);
  console.log(
    `  RSS: ${figures.rssIdleMiB} MiB idle, ${figures.rssRunningMiB} MiB with all running ` +
      `(${
        Math.round(((figures.rssRunningMiB - figures.rssIdleMiB) / figures.jobs) * 100) / 100
      } MiB per job), ${figures.rssAfterMiB} MiB after cancelling them`,
  );
  console.log(`  stored output: ${figures.storedBytesPerJob} bytes per job`);
}
