/**
 * A prompted command in the 2026-07-28 era over HTTP (`htmcp serve --http`
 * in its own process): the real SDK v2 client with an elicitation handler
 * is asked through an `input_required` result and its auto-fulfil driver
 * retries with the answer; raw requests replay a retry, change its
 * arguments, let its state expire and send answers the server cannot read;
 * two replicas on one state dir share the question and its single use.
 * `touch canary.txt` is the held command: the canary proves what ran.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { CommandResult } from "../../src/result/codes.ts";
import { assertAuditVerifies, cleanUp, type ServerProcess, startServer } from "./_http_server.ts";
import { LAUNCH, readServingUrl } from "../../scripts/conformance.ts";
import { prepareJail } from "../_helpers/jail.ts";
import { PIN, serveSandboxed } from "../transport/http/_harness.ts";
import { promptedTouchPolicy } from "./_approvals.ts";
import { connectWithOAuth } from "../transport/http/_oauth.ts";
import { exists } from "../_helpers/exists.ts";

const POLICY = (ttlS: number) =>
  [
    "[sandbox]",
    'mode = "bwrap"',
    "[[rules]]",
    'command = "touch"',
    'decision = "prompt"',
    'args = ["canary.txt"]',
    'justification = "touching the canary stands for a risky command"',
    "[approval]",
    `ttl_s = ${ttlS}`,
    "wait_ms = 300",
  ].join("\n");

const CANARY = { name: "run_command", arguments: { command: "touch canary.txt" } };
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
};
const ACCEPT = { htmcp_approval: { action: "accept", content: {} } };

async function start(ttlS = 300): Promise<ServerProcess> {
  return await startServer({ allow: ["touch"], extraToml: POLICY(ttlS) });
}

async function connect(
  server: ServerProcess,
  asked: string[],
  answers: ("accept" | "decline" | "cancel")[],
): Promise<Client> {
  const client = new Client(
    { name: "mrtr-http-e2e", version: "1" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    },
  );
  client.setRequestHandler("elicitation/create", (request) => {
    asked.push(String((request.params as { message?: unknown }).message));
    return { action: answers.shift() ?? "decline", content: {} };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  // The commands of these tests run in the kernel sandbox, never without one.
  const described = await client.callTool({ name: "describe_policy", arguments: {} });
  assert.match(
    String((described.structuredContent as { sandbox: string }).sandbox),
    /kernel sandbox \(bubblewrap\)/,
  );
  return client;
}

/** One raw 2026 `tools/call` (the retry fields as given); the JSON-RPC answer. */
async function post(
  server: { readonly url: string; readonly token?: string },
  args: Record<string, unknown>,
  retry: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const response = await fetch(server.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "run_command",
      ...(server.token === undefined ? {} : { authorization: `Bearer ${server.token}` }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: crypto.randomUUID(),
      method: "tools/call",
      params: { name: "run_command", arguments: args, _meta: ENVELOPE, ...retry },
    }),
  });
  const text = await response.text();
  return text.startsWith("{")
    ? JSON.parse(text)
    : JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? "{}");
}

async function asked(
  server: { readonly url: string },
  args: Record<string, unknown>,
): Promise<string> {
  const first = await post(server, args);
  const result = first.result as Record<string, unknown>;
  assert.equal(result?.resultType, "input_required", JSON.stringify(first));
  const requests = result.inputRequests as Record<
    string,
    { method: string; params: Record<string, unknown> }
  >;
  assert.deepEqual(Object.keys(requests), ["htmcp_approval"]);
  assert.equal(requests.htmcp_approval?.method, "elicitation/create");
  // A form with no fields: the answer carries nothing but the human's choice.
  assert.equal(requests.htmcp_approval?.params.mode, "form");
  assert.deepEqual(requests.htmcp_approval?.params.requestedSchema, {
    type: "object",
    properties: {},
  });
  return result.requestState as string;
}

function codeOf(answer: Record<string, unknown>): number | undefined {
  return (answer.error as { code?: number } | undefined)?.code;
}

function events(records: Record<string, unknown>[], name: string) {
  return records.filter((r) => r.kind === "event" && r.event === name);
}

Deno.test("http 2026-07-28: the SDK v2 client is asked with the exact argv; accept runs once, an identical call asks again, decline gives APPROVAL_DENIED", async () => {
  const server = await start();
  const canary = join(server.dir, "jail", "canary.txt");
  try {
    const questions: string[] = [];
    const client = await connect(server, questions, ["accept", "accept", "decline"]);
    const first = (await client.callTool(CANARY)).structuredContent as unknown as CommandResult;
    assert.equal(first.code, "OK", first.policy_reason);
    assert.ok(await exists(canary));
    assert.match(questions[0] ?? "", /Command: \[".*touch","canary\.txt"\]/);
    assert.match(questions[0] ?? "", /Working directory \(in the jail\): \./);
    assert.match(questions[0] ?? "", /Rule: touch canary\.txt/);
    assert.match(questions[0] ?? "", /touching the canary stands for a risky command/);

    await Deno.remove(canary);
    const second = (await client.callTool(CANARY)).structuredContent as unknown as CommandResult;
    assert.equal(second.code, "OK");
    assert.equal(questions.length, 2, "the first answer is not reused");
    await Deno.remove(canary);

    const declined = (await client.callTool(CANARY)).structuredContent as unknown as CommandResult;
    assert.equal(declined.code, "APPROVAL_DENIED", declined.policy_reason);
    assert.equal(await exists(canary), false);
    await client.close();

    const records = await server.records();
    assert.deepEqual(
      events(records, "approval_requested").map((r) => [r.via, r.delivery]),
      [["client", "mrtr"], ["client", "mrtr"], ["client", "mrtr"]],
    );
    assert.deepEqual(
      events(records, "approval_answered").map((r) => [r.answer, r.by, r.delivery]),
      [
        ["allow", "client_elicitation", "mrtr"],
        ["allow", "client_elicitation", "mrtr"],
        ["deny", "client_elicitation", "mrtr"],
      ],
    );
    const attempts = records.filter((r) => r.kind === "attempt" && r.tool === "run_command");
    assert.deepEqual(attempts.map((r) => r.code), [
      "APPROVAL_PENDING",
      null,
      "APPROVAL_PENDING",
      null,
      "APPROVAL_PENDING",
      "APPROVAL_DENIED",
    ]);
    const runs = attempts.filter((r) => r.verdict === "allow");
    assert.deepEqual(
      runs.map((r) => r.approval_id),
      events(records, "approval_answered").slice(0, 2).map((r) => r.approval_id),
    );
    assert.deepEqual(
      records.filter((r) => r.kind === "outcome" && runs.some((a) => a.call_id === r.call_id))
        .map((r) => r.code),
      ["OK", "OK"],
    );
  } finally {
    // Stops the server and checks `htmcp audit verify`.
    await cleanUp(server);
  }
});

Deno.test("http 2026-07-28: a replayed retry, other arguments, an expired state and unreadable answers are refused with -32602 and nothing runs", async () => {
  const server = await start(3);
  const jail = join(server.dir, "jail");
  try {
    const state = await asked(server, CANARY.arguments);
    const ran = await post(server, CANARY.arguments, {
      inputResponses: ACCEPT,
      requestState: state,
    });
    const result = (ran.result as { structuredContent: CommandResult }).structuredContent;
    assert.equal(result.code, "OK", result.policy_reason);
    assert.ok(await exists(join(jail, "canary.txt")));
    await Deno.remove(join(jail, "canary.txt"));

    const replay = await post(server, CANARY.arguments, {
      inputResponses: ACCEPT,
      requestState: state,
    });
    assert.equal(codeOf(replay), -32602);
    assert.equal((replay.error as { message: string }).message, "Invalid or expired requestState");

    const other = await asked(server, CANARY.arguments);
    const changed = await post(server, { command: "touch other.txt" }, {
      inputResponses: ACCEPT,
      requestState: other,
    });
    assert.equal(codeOf(changed), -32602);

    for (const inputResponses of [null, [ACCEPT], "accept", { htmcp_approval: 12345 }]) {
      const round = await asked(server, CANARY.arguments);
      const refused = await post(server, CANARY.arguments, { inputResponses, requestState: round });
      assert.equal(codeOf(refused), -32602, JSON.stringify(inputResponses));
    }

    const late = await asked(server, CANARY.arguments);
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    const expired = await post(server, CANARY.arguments, {
      inputResponses: ACCEPT,
      requestState: late,
    });
    assert.equal(codeOf(expired), -32602);

    assert.equal(await exists(join(jail, "canary.txt")), false);
    assert.equal(await exists(join(jail, "other.txt")), false);
    const records = await server.records();
    assert.deepEqual(
      events(records, "request_state_refused").map((r) => r.reason),
      ["replayed", "other_arguments", "expired"],
    );
    assert.equal(events(records, "input_response_refused").length, 4);
    assert.equal(
      records.filter((r) => r.kind === "attempt" && r.verdict === "allow").length,
      1,
      "only the one accepted retry ran",
    );
  } finally {
    await cleanUp(server);
  }
});

/** One replica: `htmcp serve --http` on the fleet's policy file (one jail, state dir, audit log). */
async function startReplica(policy: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", LAUNCH, "serve", "--policy", policy, "--http", "127.0.0.1:0"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const { url, stderr } = await readServingUrl(child);
  // Each replica runs its commands in the kernel sandbox, never without one.
  assert.match(stderr(), /sandbox: Commands run in the kernel sandbox .*mode=bwrap/);
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

async function writeFleetPolicy(dir: string): Promise<string> {
  const policy = join(dir, "policy.toml");
  await Deno.writeTextFile(
    policy,
    [
      `jail_root = "jail"`,
      `audit_log = "audit.jsonl"`,
      `state_dir = "state"`,
      "[allowlist]",
      'commands = ["touch"]',
      "[auth]",
      'mode = "none"',
      POLICY(300),
      "",
    ].join("\n"),
  );
  return policy;
}

Deno.test("http 2026-07-28: replicas on one state dir: a question asked by one is answered on the other, once; its replay on the first is refused", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-e2e-mrtr-fleet-" }));
  await Deno.mkdir(join(dir, "jail"));
  await prepareJail(join(dir, "jail"));
  const canary = join(dir, "jail", "canary.txt");
  const policy = await writeFleetPolicy(dir);
  const first = await startReplica(policy);
  let second: Awaited<ReturnType<typeof startReplica>> | null = null;
  try {
    // Started after the first made the state dir's secret: both seal with it.
    second = await startReplica(policy);
    const state = await asked(first, CANARY.arguments);
    assert.equal(await exists(canary), false, "nothing runs before the answer");
    const ran = await post(second, CANARY.arguments, {
      inputResponses: ACCEPT,
      requestState: state,
    });
    const result = (ran.result as { structuredContent: CommandResult }).structuredContent;
    assert.equal(result.code, "OK", result.policy_reason);
    assert.ok(await exists(canary));
    await Deno.remove(canary);

    const replay = await post(first, CANARY.arguments, {
      inputResponses: ACCEPT,
      requestState: state,
    });
    assert.equal(codeOf(replay), -32602);
    assert.equal(await exists(canary), false);

    const records = (await Deno.readTextFile(join(dir, "audit.jsonl"))).split("\n")
      .filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>);
    const requested = events(records, "approval_requested");
    const answered = events(records, "approval_answered");
    assert.equal(requested.length, 1);
    assert.deepEqual(answered.map((r) => r.approval_id), [requested[0]?.approval_id]);
    // Asked by one replica's writer, answered and run by the other's.
    assert.notEqual(requested[0]?.writer, answered[0]?.writer);
    const runs = records.filter((r) => r.kind === "attempt" && r.verdict === "allow");
    assert.deepEqual(runs.map((r) => [r.approval_id, r.writer]), [
      [requested[0]?.approval_id, answered[0]?.writer],
    ]);
    const refused = events(records, "request_state_refused");
    assert.deepEqual(refused.map((r) => [r.reason, r.writer]), [[
      "replayed",
      requested[0]?.writer,
    ]]);
  } finally {
    await second?.stop();
    await first.stop();
    await assertAuditVerifies(join(dir, "audit.jsonl"));
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("http 2026-07-28 with OAuth: a question asked of one client cannot be answered by another; its own retry runs once", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-e2e-mrtr-oauth-" }));
  const jail = join(dir, "jail");
  await Deno.mkdir(jail);
  await prepareJail(jail);
  const policy = promptedTouchPolicy(dir);
  const served = await serveSandboxed(policy);
  const url = `${served.server.url}/mcp`;
  const tokens: string[] = [];
  for (let i = 0; i < 2; i++) {
    const connection = await connectWithOAuth(new URL(url), PIN);
    const token = connection.provider.tokens()?.access_token;
    await connection.close();
    assert.ok(token !== undefined);
    tokens.push(token);
  }
  const owner = { url, token: tokens[0] as string };
  const other = { url, token: tokens[1] as string };
  try {
    const state = await asked(owner, CANARY.arguments);
    const stolen = await post(other, CANARY.arguments, {
      inputResponses: ACCEPT,
      requestState: state,
    });
    assert.equal(codeOf(stolen), -32602);
    assert.equal(await exists(join(jail, "canary.txt")), false, "nothing ran for the other client");

    // The refusal spent nothing of the owner's: the state is checked for its caller first.
    const ran = await post(owner, CANARY.arguments, {
      inputResponses: ACCEPT,
      requestState: state,
    });
    const result = (ran.result as { structuredContent: CommandResult }).structuredContent;
    assert.equal(result.code, "OK", result.policy_reason);
    assert.ok(await exists(join(jail, "canary.txt")));

    const records = (await Deno.readTextFile(policy.auditLog)).split("\n").filter((l) => l !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const refused = events(records, "request_state_refused");
    assert.deepEqual(refused.map((r) => r.reason), ["other_caller"]);
    const runs = records.filter((r) => r.kind === "attempt" && r.verdict === "allow");
    assert.equal(runs.length, 1);
    const requested = events(records, "approval_requested")[0];
    const held = records.find((r) =>
      r.kind === "attempt" && r.approval_id === requested?.approval_id
    );
    assert.equal(runs[0]?.client_id, held?.client_id);
    assert.notEqual(refused[0]?.client_id, runs[0]?.client_id);
  } finally {
    await served.close();
    await assertAuditVerifies(policy.auditLog);
    await Deno.remove(dir, { recursive: true });
  }
});
