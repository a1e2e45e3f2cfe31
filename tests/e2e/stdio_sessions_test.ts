/**
 * Sessions through the real MCP client over stdio: session_start's report
 * holds only what it lists, a session keeps its cwd across calls (cd alone
 * or leading a command moves it, confined like any cwd), two servers on one
 * state dir share sessions, and an unknown or ended session id is refused
 * with nothing run and the attempt audited.
 */
import { deepEqual, equal, match, ok } from "node:assert/strict";
import { exists, type Harness, startHarness } from "../_helpers/stdio_harness.ts";

const ALLOW = ["ls", "cat", "touch", "pwd", "git"];
const FILES = { "sub/inner.txt": "inner\n", "sub/deeper/d.txt": "d\n", "top.txt": "t\n" };

async function start(state: string, extraToml = ""): Promise<Harness> {
  const harness = await startHarness({
    allow: ALLOW,
    files: FILES,
    topToml: `state_dir = "${state}"`,
    extraToml,
  });
  // Every run below must be in the kernel sandbox, not silently without it.
  match((await harness.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
  return harness;
}

async function sessionStart(harness: Harness) {
  const result = await harness.client.callTool({ name: "session_start", arguments: {} });
  return { raw: result, report: result.structuredContent as Record<string, unknown> };
}

async function withState(fn: (state: string) => Promise<void>) {
  const state = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-sessions-" }));
  try {
    await fn(`${state}/state`);
  } finally {
    await Deno.remove(state, { recursive: true });
  }
}

Deno.test("session_start reports OS, arch, jail-relative cwd, commands and limits, and nothing else", async () => {
  await withState(async (state) => {
    const harness = await start(state);
    try {
      const { raw, report } = await sessionStart(harness);
      equal(raw.isError, undefined);
      equal(report.ok, true);
      match(report.session_id as string, /^[A-Za-z0-9_-]{22}$/);
      equal(report.os, Deno.build.os);
      equal(report.arch, Deno.build.arch);
      equal(report.cwd, ".");
      deepEqual(report.commands, [...ALLOW].sort());
      // Each allowlisted command probed through run_command: a version token, or "not available".
      const versions = report.versions as Record<string, string>;
      deepEqual(Object.keys(versions).sort(), [...ALLOW].sort());
      for (const [name, version] of Object.entries(versions)) {
        ok(/^\d+(\.\d+)+[a-z0-9]{0,4}$/i.test(version) || version === "not available", name);
      }
      match(versions["cat"] ?? "", /^\d+\.\d+/, "coreutils cat reports its version");
      // Every probe is an ordinary audited call.
      const probes = (await harness.records()).filter((r) =>
        r.kind === "attempt" && JSON.stringify(r.argv ?? []).includes("--version")
      );
      ok(probes.length >= ALLOW.length, `${probes.length} probes audited`);
      // The jail is not a repository: git is allowed but has nothing to report.
      equal(report.git, null);
      deepEqual(Object.keys(report).sort(), [
        "arch",
        "commands",
        "cwd",
        "git",
        "idle_ttl_s",
        "limits",
        "ok",
        "os",
        "reason",
        "session_id",
        "versions",
      ]);
      const text = JSON.stringify(report);
      ok(!text.includes(harness.dir), "the report shows a host path");
      ok(!text.includes(state), "the report shows the state dir");
      ok(!text.includes("audit"), "the report mentions the audit log");
      ok(!text.includes('"rm"'), "the report shows the denylist");
      ok(!text.includes(Deno.env.get("PATH") ?? "\0"), "the report shows an env value");
    } finally {
      await harness.close();
    }
  });
});

Deno.test("a session keeps its cwd: cd alone and a leading cd move it, confined, and cwd is relative to it", async () => {
  await withState(async (state) => {
    const harness = await start(state);
    try {
      const id = (await sessionStart(harness)).report.session_id as string;
      const run = (command: string, extra: Record<string, unknown> = {}) =>
        harness.call("run_command", { command, session_id: id, ...extra });

      const withInput = await run("cd sub", { stdin: "x" });
      equal(withInput.code, "POLICY_DENIED");
      match(withInput.policy_reason, /stdin is accepted for one plain command only/);
      equal((await run("ls")).stdout, "sub\ntop.txt\n", "the refused cd did not move the session");

      const cd = await run("cd sub");
      equal(cd.code, "OK", cd.policy_reason);
      match(cd.policy_reason, /now "sub"/);
      equal((await run("ls")).stdout, "deeper\ninner.txt\n");
      equal(
        (await run("ls", { cwd: "deeper" })).stdout,
        "d.txt\n",
        "cwd is relative to the session",
      );
      equal((await run("cat inner.txt")).stdout, "inner\n");

      const lead = await run("cd deeper && ls");
      equal(lead.stdout, "d.txt\n");
      equal((await run("ls")).stdout, "d.txt\n", "a leading cd moved the session");

      const up = await run("cd ../.. && ls");
      equal(up.stdout, "sub\ntop.txt\n");
      const escape = await run("cd ..");
      equal(escape.code, "CWD_ESCAPE", escape.policy_reason);
      equal(
        (await run("ls")).stdout,
        "sub\ntop.txt\n",
        "a refused cd left the session where it was",
      );

      // Without the session id the call starts in the jail root as always.
      const plain = await harness.call("run_command", { command: "cd sub" });
      equal(plain.code, "POLICY_DENIED");
      match(plain.policy_reason, /outside a session/);

      const records = (await harness.records()).filter((r) => r.kind === "attempt");
      ok(records.some((r) => r.command_raw === "cd sub" && r.verdict === "allow"));
    } finally {
      await harness.close();
    }
  });
});

Deno.test("two servers on one state dir share a session; an ended or unknown id is refused, nothing ran, audited", async () => {
  await withState(async (state) => {
    const a = await start(state);
    const b = await start(state);
    try {
      const id = (await sessionStart(a)).report.session_id as string;
      equal((await a.call("run_command", { command: "cd sub", session_id: id })).code, "OK");
      const seen = await b.call("run_command", { command: "ls", session_id: id });
      equal(seen.code, "OK", seen.policy_reason);
      equal(seen.stdout, "deeper\ninner.txt\n", "server B sees the cwd server A set");

      const ended = await b.client.callTool({ name: "session_end", arguments: { session_id: id } });
      equal((ended.structuredContent as { ok: boolean }).ok, true);
      for (
        const [harness, sessionId] of [[a, id], [b, "AAAAAAAAAAAAAAAAAAAAAA"], [a, "../x"]] as const
      ) {
        const before = (await harness.records()).length;
        const refused = await harness.call("run_command", {
          command: "touch canary",
          session_id: sessionId,
        });
        equal(refused.code, "POLICY_DENIED");
        match(refused.policy_reason, /was not found/);
        const attempt = (await harness.records()).slice(before).find((r) => r.kind === "attempt");
        equal(attempt?.verdict, "deny");
        equal(attempt?.code, "POLICY_DENIED");
      }
      ok(!(await exists(`${a.jail}/canary`)) && !(await exists(`${b.jail}/canary`)));
      const again = await a.client.callTool({ name: "session_end", arguments: { session_id: id } });
      equal(again.isError, true);

      // The records are owner-only files in an owner-only folder.
      const folder = await Deno.stat(`${state}/sessions`);
      equal((folder.mode ?? 0) & 0o777, 0o700);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

Deno.test("a caller's sessions are bounded by max_per_caller; without state_dir sessions are refused", async () => {
  await withState(async (state) => {
    const harness = await start(state, "[sessions]\nmax_per_caller = 2\n");
    try {
      const first = await sessionStart(harness);
      equal(first.report.ok, true);
      equal((await sessionStart(harness)).report.ok, true);
      const third = await sessionStart(harness);
      equal(third.report.ok, false);
      equal(third.raw.isError, true);
      match(third.report.reason as string, /2 open session\(s\), the limit/);
      const files = [...Deno.readDirSync(`${state}/sessions`)].filter((e) =>
        e.name.endsWith(".json")
      );
      equal(files.length, 2);
      for (const file of files) {
        equal((Deno.statSync(`${state}/sessions/${file.name}`).mode ?? 0) & 0o777, 0o600);
      }
      await harness.client.callTool({
        name: "session_end",
        arguments: { session_id: first.report.session_id as string },
      });
      equal((await sessionStart(harness)).report.ok, true, "ending one frees its place");
    } finally {
      await harness.close();
    }
  });
  const bare = await startHarness({ allow: ALLOW });
  try {
    const { report } = await sessionStart(bare);
    equal(report.ok, false);
    match(report.reason as string, /need a state_dir/);
  } finally {
    await bare.close();
  }
});

Deno.test("session_start reports git's branch and dirty state, asked through run_command", async () => {
  await withState(async (state) => {
    const harness = await start(state);
    try {
      const owner = Deno.statSync(harness.jail);
      const git = (...args: string[]) =>
        new Deno.Command("git", { args, cwd: harness.jail, stdout: "null", stderr: "null" })
          .outputSync();
      git("init", "-q", "-b", "work");
      // The repository belongs to the jail's owner, who commands run as.
      new Deno.Command("chown", { args: ["-R", `${owner.uid}:${owner.gid}`, harness.jail] })
        .outputSync();
      const { report } = await sessionStart(harness);
      equal(report.ok, true, report.reason as string);
      deepEqual(report.git, { branch: "work", dirty: true });
      const attempts = (await harness.records()).filter((r) => r.kind === "attempt");
      equal(
        (attempts.at(-1)?.argv as string[] | undefined)?.[0],
        "git",
        "the git probe is audited like any command",
      );
    } finally {
      await harness.close();
    }
  });
});
