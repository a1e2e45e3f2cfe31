/**
 * The stdio server's bounds, against the real CLI child process (through the
 * launcher) driven over raw pipes, so the test controls exactly what is read:
 * an oversized message is refused and the server goes on; a duplicate
 * in-flight id is refused before anything runs; a client that stops reading
 * stdout no longer freezes the server (calls still end and are audited,
 * SIGTERM still works, the unread backlog is bounded); a server whose
 * launcher was SIGKILLed (pipes still open) stops by itself.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initializeMessage, LAUNCH, policyToml } from "../_helpers/stdio_harness.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { assertAcknowledgedAudited, assertAuditVerifies } from "./_http_server.ts";

interface RawServer {
  readonly dir: string;
  readonly auditPath: string;
  readonly child: Deno.ChildProcess;
  send(message: unknown): Promise<void>;
  sendRaw(bytes: Uint8Array): Promise<void>;
  /** Reads stdout until a message with `id` arrives. */
  answer(id: number | string): Promise<Record<string, unknown>>;
  records(): Promise<Record<string, unknown>[]>;
  /** Reading stdout stops (the pipe fills). */
  stopReading(): void;
  /** Reads the server's stderr (when started with it piped) until `pattern` appears. */
  stderrUntil(pattern: RegExp, timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}

/** The CLI child process through the launcher, on a fresh jail and policy, its pipes raw. */
async function spawnServer(extraToml: string, stderr: "null" | "piped") {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-stdio-bounds-" });
  const jail = join(dir, "jail");
  await Deno.mkdir(jail);
  // Output the answers must carry (printable, so it is not compacted).
  await Deno.writeTextFile(join(jail, "x.txt"), "x".repeat(1_000_000));
  // Commands run in the kernel sandbox as the jail's owner: hand the jail to it.
  await prepareJail(jail);
  const auditPath = join(dir, "audit.jsonl");
  const policyPath = join(dir, "policy.toml");
  await Deno.writeTextFile(
    policyPath,
    policyToml(jail, auditPath, { extraToml }),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-all", LAUNCH, "serve", "--policy", policyPath],
    stdin: "piped",
    stdout: "piped",
    stderr,
  }).spawn();
  const records = async () =>
    (await Deno.readTextFile(auditPath)).split("\n").filter((l) => l !== "").map((l) =>
      JSON.parse(l) as Record<string, unknown>
    );
  return { dir, auditPath, child, records };
}

async function startRaw(
  extraToml = "",
  stderr: "null" | "piped" = "null",
): Promise<RawServer> {
  const { dir, auditPath, child, records } = await spawnServer(extraToml, stderr);
  const errors = stderr === "piped" ? child.stderr.getReader() : null;
  let errorText = "";
  const errorDecoder = new TextDecoder();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  let reading = true;
  const inbox: Record<string, unknown>[] = [];
  const answer = async (id: number | string) => {
    for (;;) {
      const found = inbox.findIndex((m) => m.id === id);
      if (found >= 0) return inbox.splice(found, 1)[0] as Record<string, unknown>;
      const { done, value } = await reader.read();
      if (done) throw new Error(`stdout ended before the answer to ${id}`);
      buffered += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.trim() !== "") inbox.push(JSON.parse(line));
      }
    }
  };
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(`${JSON.stringify(message)}\n`));
  const server: RawServer = {
    dir,
    auditPath,
    child,
    send,
    sendRaw: (bytes) => writer.write(bytes),
    answer,
    records,
    stopReading: () => {
      reading = false;
    },
    async stderrUntil(pattern, timeoutMs) {
      if (errors === null) throw new Error("started with stderr null");
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(errorText)) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no ${pattern} on stderr within ${timeoutMs} ms`);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const read = await Promise.race([
          errors.read(),
          new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), left)),
        ]);
        clearTimeout(timer);
        if (read === null) continue;
        if (read.done) throw new Error(`stderr ended without ${pattern}`);
        errorText += errorDecoder.decode(read.value, { stream: true });
      }
      return errorText;
    },
    async close() {
      try {
        child.kill("SIGTERM");
      } catch {
        // gone
      }
      await writer.close().catch(() => {});
      if (reading) await reader.cancel().catch(() => {});
      await errors?.cancel().catch(() => {});
      await child.status;
      await reader.cancel().catch(() => {});
      await Deno.remove(dir, { recursive: true });
    },
  };
  await send({
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw", version: "0" },
    },
  });
  await answer("init");
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return server;
}

function call(id: number | string, command: string) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "run_command", arguments: { command } },
  };
}

function codeOf(message: Record<string, unknown>): string {
  return (message.result as { structuredContent: { code: string } }).structuredContent.code;
}

Deno.test("requests sent together with the end of stdin are all answered before the server stops, the call audited", async () => {
  // As a script piping its requests does: everything written, then stdin
  // closed at once. The server used to stop at the end of input and drop
  // the answers not yet written (here always the command's).
  const { dir, child, records } = await spawnServer("", "null");
  try {
    const word = `piped-${crypto.randomUUID()}`;
    const lines = [
      initializeMessage(1, "sh"),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      call(3, `echo ${word}`),
    ].map((message) => JSON.stringify(message)).join("\n") + "\n";
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(lines));
    await writer.close();
    const [status, stdout] = await Promise.all([child.status, new Response(child.stdout).text()]);
    assert.equal(status.code, 0);
    const answers = stdout.trim().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(answers.map((answer) => answer.id).sort(), [1, 2, 3], stdout);
    const ran = answers.find((answer) => answer.id === 3);
    assert.equal(codeOf(ran), "OK", JSON.stringify(ran));
    assert.match(JSON.stringify(ran), new RegExp(word));
    assertAcknowledgedAudited(await records(), [`echo ${word}`]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a stdin message over 4 MiB is refused with -32600 (with its id) and the server goes on", async () => {
  const server = await startRaw();
  try {
    const huge = JSON.stringify(call(42, `echo ${"x".repeat(5 * 1024 * 1024)}`));
    await server.sendRaw(new TextEncoder().encode(`${huge}\n`));
    const refused = await server.answer(42);
    assert.equal((refused.error as { code: number }).code, -32600);
    assert.match((refused.error as { message: string }).message, /larger than 4194304 bytes/);
    const word = `after-${crypto.randomUUID()}`;
    await server.send(call(43, `echo ${word}`));
    assert.equal(codeOf(await server.answer(43)), "OK");
    const records = await server.records();
    assert.equal(records.filter((r) => r.kind === "attempt").length, 1, "the huge call never ran");
    assertAcknowledgedAudited(records, [`echo ${word}`]);
  } finally {
    await server.close();
  }
  await assertAuditVerifies(server.auditPath).catch(() => {});
});

Deno.test("a second in-flight stdio request with the same id is refused before anything runs", async () => {
  const server = await startRaw();
  try {
    await server.send(call(7, "sleep 1"));
    const marker = `dup-${crypto.randomUUID()}`;
    await server.send(call(7, `echo ${marker}`));
    const first = await server.answer(7);
    assert.equal((first.error as { code: number }).code, -32600, JSON.stringify(first));
    const second = await server.answer(7);
    assert.equal(codeOf(second), "OK");
    const records = await server.records();
    assert.equal(records.some((r) => String(r.command_raw).includes(marker)), false);
    assertAcknowledgedAudited(records, ["sleep 1"]);
  } finally {
    await server.close();
  }
});

Deno.test("a client that stops reading stdout: calls still end and are audited, the backlog is bounded, SIGTERM works", async () => {
  // 1 MiB output cap -> backlog bound 9 MiB; each answer carries ~1 MiB.
  const server = await startRaw();
  try {
    server.stopReading();
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) {
      const command = `head -c 1000000 x.txt`;
      sent.push(command);
      await server.send(call(100 + i, command));
    }
    await server.send(call(200, "sleep 0.2"));
    // Every call ends and is audited although nothing is read (beyond
    // max_concurrent a call waits in the queue, then runs or is refused
    // BUSY, either way with its attempt record).
    let records: Record<string, unknown>[] = [];
    const settled = (all: Record<string, unknown>[]) => {
      const attempts = all.filter((r) => r.kind === "attempt");
      const allowed = attempts.filter((r) => r.verdict === "allow");
      return attempts.length === 5 &&
        allowed.every((a) => all.some((r) => r.kind === "outcome" && r.call_id === a.call_id));
    };
    for (let i = 0; i < 500; i++) {
      records = await server.records();
      if (settled(records)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(settled(records), JSON.stringify(records.map((r) => [r.kind, r.code])));
    const pid = records.find((r) => r.event === "server_start")?.pid as number;
    // /proc needs all permissions in Deno: ask ps, a child process.
    const ps = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)] }).output();
    const rssKiB = Number(new TextDecoder().decode(ps.stdout).trim());
    console.log(`server RSS with 5 unread answers: ${(rssKiB / 1024).toFixed(1)} MiB`);
    assert.ok(rssKiB < 400 * 1024, `RSS ${rssKiB} KiB`);
    const started = performance.now();
    server.child.kill("SIGTERM");
    const exit = await server.child.status;
    const ms = performance.now() - started;
    console.log(`SIGTERM with stdout blocked: exited after ${ms.toFixed(0)} ms`);
    assert.ok(ms < 10_000);
    assert.equal(exit.success, true);
    records = await server.records();
    assert.equal(records.at(-1)?.event, "server_stop");
    assert.equal(records.at(-1)?.reason, "received SIGTERM");
  } finally {
    await server.close();
  }
});

Deno.test("a client that leaves more than the bound unread stops the server, with every outcome audited", async () => {
  const server = await startRaw(`[limits]\nmax_output_bytes = 100000\n`);
  try {
    server.stopReading();
    // Bound: 8 x 100 kB + 1 MiB = ~1.8 MB; about 19 answers of ~100 kB pass it.
    let exited = false;
    server.child.status.then(() => exited = true);
    for (let i = 0; i < 60 && !exited; i++) {
      await server.send(call(300 + i, "head -c 100000 x.txt")).catch(() => {});
      for (let j = 0; j < 200 && !exited; j++) {
        const outcomes = (await server.records()).filter((r) => r.kind === "outcome").length;
        if (outcomes > i) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    const exit = await server.child.status;
    assert.equal(exit.success, true);
    const records = await server.records();
    const stop = records.at(-1);
    assert.equal(stop?.event, "server_stop");
    assert.match(String(stop?.reason), /left more than \d+ bytes of answers unread/);
    const attempts = records.filter((r) => r.kind === "attempt" && r.verdict === "allow");
    for (const attempt of attempts) {
      assert.ok(
        records.some((r) => r.kind === "outcome" && r.call_id === attempt.call_id),
        "every call that ran has its outcome",
      );
    }
    console.log(`stopped after ${attempts.length} calls ran with their answers unread`);
  } finally {
    await server.close();
  }
});

Deno.test("a client that never reads stderr: every call is still answered, and the lines dropped meanwhile are counted once it reads", async () => {
  // About 200 bytes of operator log per call: 1,200 calls are more than a
  // 64 KiB pipe and the 64 KiB queue hold together. A blocking stderr write
  // froze the server at the pipe's limit (call 350 or so); each answer here
  // must come within its own bound.
  const server = await startRaw("", "piped");
  try {
    for (let id = 1; id <= 1_200; id++) {
      await server.send({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: "explain_command", arguments: { command: "true" } },
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const answered = await Promise.race([
        server.answer(id),
        new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 10_000)),
      ]);
      clearTimeout(timer);
      assert.notEqual(answered, null, `call ${id} was not answered within 10 s`);
      assert.equal(codeOf(answered!), "OK");
    }
    const text = await server.stderrUntil(/operator log lines were dropped/, 20_000);
    const dropped = Number(/(\d+) operator log lines were dropped/.exec(text)?.[1]);
    assert.ok(dropped > 0 && dropped < 1_200, text.slice(-500));
    // The audit log, a file, has every call whatever happened to stderr.
    const explains = (await server.records()).filter((r) => r.kind === "explain");
    assert.equal(explains.length, 1_200);
  } finally {
    await server.close();
  }
});

Deno.test("a server whose launcher was SIGKILLed (pipes kept open) notices and stops", async () => {
  const server = await startRaw();
  try {
    const records = await server.records();
    const pid = records.find((r) => r.event === "server_start")?.pid as number;
    server.child.kill("SIGKILL");
    await server.child.status;
    const started = performance.now();
    let stop: Record<string, unknown> | undefined;
    for (let i = 0; i < 500 && stop === undefined; i++) {
      stop = (await server.records()).find((r) => r.event === "server_stop");
      if (stop === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    console.log(
      `orphaned server ${pid} stopped after ${(performance.now() - started).toFixed(0)} ms`,
    );
    assert.ok(stop !== undefined, "the orphan wrote server_stop");
    assert.match(String(stop.reason), /parent process \d+ is gone/);
  } finally {
    await server.close();
  }
  await assertAuditVerifies(server.auditPath).catch(() => {});
});
