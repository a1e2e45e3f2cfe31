/**
 * `htmcp audit show`, `tail` and `stats` on real logs written by the real
 * server (started through the launcher, driven by the real MCP client), and
 * `tail -f` following a live server and a rotated file.
 */
import assert from "node:assert/strict";
import { MAIN, startHarness } from "../_helpers/stdio_harness.ts";

const decoder = new TextDecoder();

/** Runs `htmcp audit ARGS` as its own process, with read access only. */
async function audit(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-read", MAIN, "audit", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

/** Starts `htmcp audit tail -f FILE`; `until` waits for its output to satisfy a test. */
function follow(file: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-read", MAIN, "audit", "tail", "-f", "--json", file],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.getReader();
  let text = "";
  return {
    async until(test: (text: string) => boolean, what: string): Promise<string> {
      const deadline = Date.now() + 20_000;
      while (!test(text)) {
        const left = deadline - Date.now();
        if (left <= 0) assert.fail(`tail -f never showed ${what}; it printed:\n${text}`);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const chunk = await Promise.race([
          reader.read(),
          new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), left)),
        ]);
        clearTimeout(timer);
        if (chunk !== null && chunk.value !== undefined) text += decoder.decode(chunk.value);
        if (chunk !== null && chunk.done) break;
      }
      return text;
    },
    async stop(): Promise<void> {
      // Our own child, by its handle.
      child.kill("SIGTERM");
      await reader.cancel();
      await child.status;
    },
  };
}

function jsonRows(stdout: string): Record<string, unknown>[] {
  return stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

Deno.test("audit show, tail and stats read the calls of a real server's log", async () => {
  const h = await startHarness({ allow: ["echo", "true", "cat"] });
  try {
    assert.equal((await h.call("run_command", { command: "echo hi" })).code, "OK");
    assert.equal((await h.call("run_command", { command: "true" })).code, "OK");
    const refused = await h.call("run_command", { command: "rm -rf x" });
    assert.notEqual(refused.code, "OK");
    const outside = await h.call("run_command", { command: "cat /etc/shadow" });
    assert.notEqual(outside.code, "OK");
    await h.call("explain_command", { command: "echo what" });
    // A command carrying a terminal escape (refused, and logged): printed
    // escaped, never raw.
    const escaped = await h.call("run_command", { command: "echo \x1b]0;owned\x07title" });
    assert.notEqual(escaped.code, "OK");

    const shown = await audit("show", h.auditLog);
    assert.equal(shown.code, 0, shown.stderr);
    const lines = shown.stdout.trimEnd().split("\n");
    assert.match(lines[0]!, /^TIME \(UTC\)\s+CALLER\s+TOOL\s+COMMAND\s+RESULT\s+EXIT\s+MS$/);
    assert.equal(lines.length, 1 + 6, shown.stdout);
    assert.ok(lines.some((l) => /echo hi\s+OK\s+0\s+\d+$/.test(l)), shown.stdout);
    assert.ok(lines.some((l) => l.includes("rm -rf x") && l.includes(`deny ${refused.code}`)));
    assert.ok(lines.some((l) => l.includes("explain_command") && l.includes("explain OK")));
    assert.ok(!shown.stdout.includes("\x1b"), "a raw escape reached the terminal");
    assert.ok(shown.stdout.includes("\\x1b]0;owned\\x07title"));

    const json = jsonRows((await audit("show", "--json", h.auditLog)).stdout);
    assert.equal(json.length, 6);
    const records = await h.records();
    const denied = records.find((r) => r.kind === "attempt" && r.command_raw === "rm -rf x")!;
    const row = json.find((r) => r.command === "rm -rf x")!;
    assert.deepEqual(
      [row.verdict, row.code, row.client, row.tool, row.call_id, row.exit_code],
      ["deny", denied.code, "stdio", "run_command", denied.call_id, null],
    );
    const ok = json.find((r) => r.command === "echo hi")!;
    assert.equal(ok.exit_code, 0);
    assert.equal(typeof ok.duration_ms, "number");

    const only = async (...filters: string[]) =>
      jsonRows((await audit("show", "--json", ...filters, h.auditLog)).stdout).map((r) =>
        r.command
      );
    assert.deepEqual(await only("--denied"), [
      "rm -rf x",
      "cat /etc/shadow",
      "echo \x1b]0;owned\x07title",
    ]);
    assert.deepEqual(await only("--command", "echo h*"), ["echo hi"]);
    assert.deepEqual(await only("--command", "[rt]*"), ["true", "rm -rf x"]);
    assert.deepEqual(await only("--code", "OK"), ["echo hi", "true", "echo what"]);
    assert.deepEqual((await only("--client", "stdio", "--since", "1h")).length, 6);
    assert.deepEqual(await only("--client", "someone-else"), []);
    assert.deepEqual(await only("--until", "2000-01-01"), []);
    const bad = await audit("show", "--since", "yesterday", h.auditLog);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--since "yesterday" is neither/);

    const tail = jsonRows((await audit("tail", "-n", "2", "--json", h.auditLog)).stdout);
    assert.equal(tail.length, 2);
    assert.equal(tail[1]!.command, "echo \x1b]0;owned\x07title");

    const stats = JSON.parse((await audit("stats", "--json", h.auditLog)).stdout);
    assert.equal(stats.calls, 5);
    assert.equal(stats.allowed, 2);
    assert.equal(stats.refused, 3);
    assert.equal(stats.explained, 1);
    assert.equal(stats.results_by_code.OK, 2);
    const byCode: Record<string, number> = {};
    for (const r of records.filter((r) => r.kind === "attempt" && r.verdict === "deny")) {
      byCode[r.code as string] = (byCode[r.code as string] ?? 0) + 1;
    }
    assert.deepEqual(
      Object.entries(stats.refusals_by_code).sort(),
      Object.entries(byCode).sort(),
    );
    assert.equal(stats.top_commands[0].command, "echo");
    assert.equal(stats.top_commands[0].calls, 2);
    assert.equal(typeof stats.duration_ms.p50, "number");
    assert.ok(stats.duration_ms.p95 >= stats.duration_ms.p50);
    assert.equal(stats.clients[0].client, "stdio");
    const text = await audit("stats", h.auditLog);
    assert.match(text.stdout, /^calls: 5 \(2 allowed, 3 refused\); explain_command: 1$/m);
    assert.match(text.stdout, /duration of allowed calls: p50 \d+ ms, p95 \d+ ms/);
  } finally {
    await h.close();
  }
});

Deno.test("audit tail -f prints calls of a live server as they are written", async () => {
  const h = await startHarness({ allow: ["echo"] });
  const tail = follow(h.auditLog);
  try {
    await h.call("run_command", { command: "echo before" });
    await tail.until((t) => t.includes('"echo before"'), "the first call");
    await h.call("run_command", { command: "echo after" });
    await h.call("run_command", { command: "rm nothing" });
    const text = await tail.until((t) => t.includes('"rm nothing"'), "the later calls");
    const rows = jsonRows(text);
    assert.deepEqual(rows.map((r) => r.command), ["echo before", "echo after", "rm nothing"]);
    assert.equal(rows[1]!.code, "OK");
    assert.equal(rows[2]!.verdict, "deny");
  } finally {
    await tail.stop();
    await h.close();
  }
});

Deno.test("audit tail -f follows the path to a new file when the log is rotated", async () => {
  const h = await startHarness({ allow: ["echo"] });
  try {
    await h.call("run_command", { command: "echo one" });
    await h.call("run_command", { command: "echo two" });
    const lines = (await Deno.readTextFile(h.auditLog)).split("\n").filter(Boolean);
    const first = lines.findIndex((l) => l.includes('"echo two"') && l.includes('"attempt"'));
    const log = `${h.dir}/copy.jsonl`;
    await Deno.writeTextFile(log, lines.slice(0, first).join("\n") + "\n");
    const tail = follow(log);
    try {
      await tail.until((t) => t.includes('"echo one"'), "the copied call");
      // logrotate's `create`: rename, then a new file (new inode) at the path.
      await Deno.rename(log, `${log}.1`);
      await Deno.writeTextFile(log, lines.slice(first).join("\n") + "\n");
      const text = await tail.until((t) => t.includes('"echo two"'), "the new file's call");
      assert.deepEqual(jsonRows(text).map((r) => r.command), ["echo one", "echo two"]);
    } finally {
      await tail.stop();
    }
  } finally {
    await h.close();
  }
});

Deno.test("audit show and stats read a rotated series as one log, a call split across files included", async () => {
  const h = await startHarness({ allow: ["echo"] });
  try {
    await h.call("run_command", { command: "echo one" });
    await h.call("run_command", { command: "echo two" });
    const lines = (await Deno.readTextFile(h.auditLog)).split("\n").filter(Boolean);
    // Cut between "echo two"'s attempt and its outcome, as a rotation can.
    const cut = lines.findIndex((l) => l.includes('"echo two"') && l.includes('"attempt"')) + 1;
    await Deno.writeTextFile(`${h.dir}/audit.jsonl.1`, lines.slice(0, cut).join("\n") + "\n");
    await Deno.writeTextFile(`${h.dir}/audit.jsonl.2`, lines.slice(cut).join("\n") + "\n");
    const series = [`${h.dir}/audit.jsonl.1`, `${h.dir}/audit.jsonl.2`];
    const rows = jsonRows((await audit("show", "--json", ...series)).stdout);
    assert.deepEqual(rows.map((r) => [r.command, r.code, r.exit_code]), [
      ["echo one", "OK", 0],
      ["echo two", "OK", 0],
    ]);
    // Read alone, the first file has the call without its outcome.
    const alone = jsonRows((await audit("show", "--json", series[0]!)).stdout);
    assert.deepEqual(alone.map((r) => [r.command, r.code]), [["echo one", "OK"], [
      "echo two",
      null,
    ]]);
    const stats = JSON.parse((await audit("stats", "--json", ...series)).stdout);
    assert.equal(stats.results_by_code.OK, 2);
    const missing = await audit("show", `${h.dir}/missing.jsonl`);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Cannot read the audit log/);
  } finally {
    await h.close();
  }
});
