/**
 * The approval page as an operator uses it: the real htmcp CLI serves HTTP
 * with OAuth on 127.0.0.1 (the generated permission set, the kernel
 * sandbox), the real SDK client, which declares no elicitation, calls a
 * prompted command, and the call waits. Headless Chromium (puppeteer-core in
 * a child process) opens `/approvals`, types the admin PIN and clicks Allow
 * or Deny. The command creates a canary in the jail only when it runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startCliServer } from "../../scripts/conformance.ts";
import { ApprovalStore } from "../../src/approvals/mod.ts";
import type { ApprovalRecord } from "../../src/approvals/mod.ts";
import { LocalStateStore } from "../../src/state/mod.ts";
import { exists } from "../_helpers/exists.ts";
import { assertSandboxMode, prepareJail } from "../_helpers/jail.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";
import { assertAuditVerifies } from "./_http_server.ts";

const PIN = "fjord-3-lantern-58";
const BROWSER = fileURLToPath(new URL("./_browser_approvals.ts", import.meta.url));
const CHROMIUM = "/usr/bin/chromium";
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));
const COMMAND = "touch canary.txt";

async function writePolicy(dir: string): Promise<string> {
  await Deno.mkdir(join(dir, "jail"));
  // Commands run in the kernel sandbox as the jail's owner: hand the jail to it.
  await prepareJail(join(dir, "jail"));
  const path = join(dir, "policy.toml");
  await Deno.writeTextFile(
    path,
    `jail_root = "jail"
audit_log = "audit.jsonl"
state_dir = "state"

[allowlist]
commands = ["touch", "ls"]

[sandbox]
mode = "bwrap"

[[rules]]
command = "touch"
decision = "prompt"
args = ["canary.txt"]
justification = "The canary marks that a human let this run."

[approval]
ttl_s = 120
wait_ms = 90000
require = "operator"

[auth]
mode = "oauth"
`,
  );
  return path;
}

interface Seen {
  readonly posts: readonly { status: number; origin: string | null; fetchSite: string | null }[];
  readonly outcome: string;
}

/** Runs the operator's browser against the page; fails the test if it did not get through. */
async function operatorAnswers(
  pageUrl: string,
  id: string,
  answer: "allow" | "deny",
  argv: readonly string[],
  dir: string,
): Promise<Seen> {
  const screenshot = join(dir, `approvals-${answer}.png`);
  const browser = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "-A",
      "--config",
      CONFIG,
      BROWSER,
      pageUrl,
      PIN,
      id,
      answer,
      JSON.stringify(argv),
      screenshot,
    ],
    stdin: "null",
  }).output();
  assert.equal(browser.code, 0, new TextDecoder().decode(browser.stderr));
  assert.ok((await Deno.stat(screenshot)).size > 1000, "a screenshot of the page was taken");
  const keep = Deno.env.get("HTMCP_KEEP_SCREENSHOT");
  if (keep !== undefined) await Deno.copyFile(screenshot, keep);
  return JSON.parse(new TextDecoder().decode(browser.stdout)) as Seen;
}

/** The pending approval the waiting call made (polled from the state store, as the CLI lists it). */
async function pendingApproval(stateDir: string): Promise<ApprovalRecord> {
  const store = new LocalStateStore(stateDir);
  try {
    const approvals = new ApprovalStore(store);
    for (let i = 0; i < 300; i++) {
      const pending = (await approvals.list()).filter((r) => r.state === "pending");
      if (pending.length === 1) return pending[0] as ApprovalRecord;
      assert.ok(pending.length === 0, "one call, one pending approval");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("No approval became pending.");
  } finally {
    await store.close();
  }
}

async function records(dir: string): Promise<Record<string, unknown>[]> {
  return (await Deno.readTextFile(join(dir, "audit.jsonl"))).split("\n").filter((l) => l !== "")
    .map((l) => JSON.parse(l));
}

async function withApprovalServer(
  fn: (client: Client, base: string, dir: string) => Promise<void>,
): Promise<void> {
  await Deno.stat(CHROMIUM); // the test needs the real browser: fail loudly without it
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-browser-approvals-" }));
  const server = await startCliServer(await writePolicy(dir), { HTMCP_OAUTH_ADMIN_PIN: PIN });
  let stopped = false;
  try {
    const mcpUrl = new URL(server.url);
    const connection = await connectWithOAuth(mcpUrl, PIN);
    try {
      await assertSandboxMode({
        describePolicy: async () => {
          const result = await connection.client.callTool({
            name: "describe_policy",
            arguments: {},
          });
          return result.structuredContent as { sandbox: string };
        },
      }, "bwrap");
      await fn(connection.client, mcpUrl.origin, dir);
    } finally {
      await connection.close();
    }
    server.child.kill("SIGTERM");
    await server.child.status;
    stopped = true;
    await assertAuditVerifies(join(dir, "audit.jsonl"));
    assert.doesNotMatch(server.stderr(), /approvals page refused/, server.stderr());
  } finally {
    if (!stopped) {
      server.child.kill("SIGTERM");
      await server.child.status;
    }
    await Deno.remove(dir, { recursive: true });
  }
}

function structured(result: unknown): { code: string; policy_reason: string } {
  return (result as { structuredContent: { code: string; policy_reason: string } })
    .structuredContent;
}

Deno.test("headless Chromium allows a waiting prompted call with the PIN, and it runs once", async () => {
  await withApprovalServer(async (client, base, dir) => {
    const canary = join(dir, "jail", "canary.txt");
    const call = client.callTool(
      { name: "run_command", arguments: { command: COMMAND } },
      undefined,
      {
        timeout: 120_000,
      },
    );
    const held = await pendingApproval(join(dir, "state"));
    assert.deepEqual(held.argv.slice(1), ["canary.txt"]);
    assert.equal(await exists(canary), false, "nothing ran before the answer");

    const seen = await operatorAnswers(`${base}/approvals`, held.id, "allow", held.argv, dir);
    assert.deepEqual(seen.posts.map((p) => p.status), [200, 200], "unlock, then allow");
    for (const post of seen.posts) {
      assert.equal(post.origin, base, "Chromium sent our origin on our own form");
      assert.equal(post.fetchSite, "same-origin");
    }
    assert.match(seen.outcome, /Allowed/);

    const result = structured(await call);
    assert.equal(result.code, "OK", result.policy_reason);
    assert.ok(await exists(canary), "the command ran");

    const all = await records(dir);
    const mine = all.filter((r) => r.approval_id === held.id);
    // The request first and the run last; between them the page's record
    // (written as it answers) and the call's (written when it sees the
    // answer), in whichever order the two got there.
    const kinds = mine.map((r) => r.kind === "event" ? r.event : r.kind);
    assert.equal(kinds.length, 4, JSON.stringify(kinds));
    assert.equal(kinds[0], "approval_requested");
    assert.deepEqual(
      new Set(kinds.slice(1, 3)),
      new Set(["approval_page_answer", "approval_answered"]),
    );
    assert.equal(kinds[3], "attempt");
    const requested = mine[0];
    const pageAnswer = mine.find((r) => r.event === "approval_page_answer");
    const answered = mine.find((r) => r.event === "approval_answered");
    const attempt = mine[3];
    assert.equal(requested?.via, "operator");
    assert.equal(pageAnswer?.by, "pin_page:127.0.0.1");
    assert.equal(answered?.answer, "allow");
    assert.equal(answered?.by, "pin_page:127.0.0.1");
    assert.equal(attempt?.verdict, "allow");
    const runs = all.filter((r) =>
      r.kind === "attempt" && r.verdict === "allow" &&
      String(r.command_raw ?? "").includes("canary")
    );
    assert.equal(runs.length, 1, "it ran once");
    const outcome = all.find((r) => r.kind === "outcome" && r.call_id === attempt?.call_id);
    assert.ok(outcome !== undefined, "the run's outcome is audited");
  });
});

Deno.test("headless Chromium denies a waiting prompted call with the PIN: APPROVAL_DENIED, nothing ran", async () => {
  await withApprovalServer(async (client, base, dir) => {
    const canary = join(dir, "jail", "canary.txt");
    const call = client.callTool(
      { name: "run_command", arguments: { command: COMMAND } },
      undefined,
      {
        timeout: 120_000,
      },
    );
    const held = await pendingApproval(join(dir, "state"));
    const seen = await operatorAnswers(`${base}/approvals`, held.id, "deny", held.argv, dir);
    assert.deepEqual(seen.posts.map((p) => p.status), [200, 200]);
    assert.match(seen.outcome, /Denied/);

    const result = structured(await call);
    assert.equal(result.code, "APPROVAL_DENIED", result.policy_reason);
    assert.equal(await exists(canary), false, "nothing ran");
    const all = await records(dir);
    const answered = all.find((r) => r.event === "approval_answered" && r.approval_id === held.id);
    assert.equal(answered?.answer, "deny");
    assert.equal(answered?.by, "pin_page:127.0.0.1");
    const attempt = all.find((r) => r.kind === "attempt" && r.approval_id === held.id);
    assert.equal(attempt?.verdict, "deny");
    assert.equal(attempt?.code, "APPROVAL_DENIED");
    assert.ok(!all.some((r) => r.kind === "outcome" && r.call_id === attempt?.call_id));
  });
});
