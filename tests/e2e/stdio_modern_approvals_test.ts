/**
 * A prompted command in the 2026-07-28 era over stdio, with the real SDK v2
 * client: a client whose requests declare form elicitation is asked through
 * an `input_required` result (MRTR) with a sealed `requestState`, answered
 * by its own elicitation handler through the SDK's auto-fulfil driver; a
 * client that does not (or a policy with `require = "operator"`) takes the
 * out-of-band path. `touch canary.txt` is the held command, so the canary
 * proves whether anything ran.
 */
import assert from "node:assert/strict";
import { Client, ProtocolError } from "@modelcontextprotocol/client";
import type { CommandResult } from "../../src/result/codes.ts";
import { startV2Stdio, type V2StdioHarness } from "./_v2_clients.ts";
import { assertAuditVerifies } from "./_http_server.ts";
import { exists, startHarness } from "../_helpers/stdio_harness.ts";

const RULES = [
  "[[rules]]",
  'command = "touch"',
  'decision = "prompt"',
  'args = ["canary.txt"]',
  'justification = "touching the canary stands for a risky command"',
  "[approval]",
  "wait_ms = 300",
].join("\n");

type Action = "accept" | "decline" | "cancel";

/** A 2026 client declaring form elicitation that answers every question with `answer()`. */
function askingClient(
  asked: string[],
  answer: () => Action,
  inputRequired: { autoFulfill: boolean } = { autoFulfill: true },
): Client {
  const client = new Client(
    { name: "mrtr-e2e", version: "1" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      inputRequired,
    },
  );
  client.setRequestHandler("elicitation/create", (request) => {
    asked.push(String((request.params as { message?: unknown }).message));
    return { action: answer(), content: {} };
  });
  return client;
}

async function start(client: Client, extra = ""): Promise<V2StdioHarness> {
  const h = await startV2Stdio("2026-07-28", {
    allow: ["touch"],
    extraToml: `${RULES}\n${extra}\n`,
    client,
  });
  // Every test here runs its commands in the kernel sandbox, never without one.
  const described = await h.client.callTool({ name: "describe_policy", arguments: {} });
  assert.match(
    String((described.structuredContent as { sandbox: string }).sandbox),
    /kernel sandbox \(bubblewrap\)/,
  );
  return h;
}

function events(records: Record<string, unknown>[], name: string) {
  return records.filter((r) => r.kind === "event" && r.event === name);
}

function resultOf(result: unknown): CommandResult {
  return (result as { structuredContent: CommandResult }).structuredContent;
}

const CANARY = { name: "run_command", arguments: { command: "touch canary.txt" } };

/** The raw 2026 `tools/call` a client library would send, with retry fields the test sets. */
function rawCall(client: Client, params: Record<string, unknown>) {
  return client.callTool({ ...CANARY, ...params } as never, { allowInputRequired: true } as never);
}

async function firstRound(client: Client): Promise<{ requestState: string }> {
  const first = await rawCall(client, {}) as unknown as Record<string, unknown>;
  assert.equal(first.resultType, "input_required", JSON.stringify(first));
  assert.equal(typeof first.requestState, "string");
  return { requestState: first.requestState as string };
}

async function refusedWith(call: Promise<unknown>): Promise<ProtocolError> {
  const error = await call.then(
    (value) => assert.fail(`expected a JSON-RPC error, got ${JSON.stringify(value)}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ProtocolError, String(error));
  return error;
}

Deno.test("stdio 2026-07-28: the client is asked through input_required with the exact argv; accepting runs the command once and an identical call asks again", async () => {
  const asked: string[] = [];
  const h = await start(askingClient(asked, () => "accept"));
  try {
    const first = resultOf(await h.client.callTool(CANARY));
    assert.equal(first.code, "OK", first.policy_reason);
    assert.ok(await exists(`${h.jail}/canary.txt`));
    assert.equal(asked.length, 1);
    const message = asked[0] ?? "";
    assert.match(message, /Command: \[".*touch","canary\.txt"\]/);
    assert.match(message, /Working directory \(in the jail\): \./);
    assert.match(message, /Rule: touch canary\.txt/);
    assert.match(message, /touching the canary stands for a risky command/);

    await Deno.remove(`${h.jail}/canary.txt`);
    const second = resultOf(await h.client.callTool(CANARY));
    assert.equal(second.code, "OK");
    assert.equal(asked.length, 2, "the first answer is not reused");
    assert.ok(await exists(`${h.jail}/canary.txt`));

    const records = await h.records();
    const requested = records.filter((r) => r.event === "approval_requested");
    const answered = records.filter((r) => r.event === "approval_answered");
    assert.deepEqual(requested.map((r) => [r.via, r.delivery]), [
      ["client", "mrtr"],
      ["client", "mrtr"],
    ]);
    assert.deepEqual(answered.map((r) => [r.answer, r.by, r.delivery]), [
      ["allow", "client_elicitation", "mrtr"],
      ["allow", "client_elicitation", "mrtr"],
    ]);
    assert.deepEqual(answered.map((r) => r.approval_id), requested.map((r) => r.approval_id));
    // The question round is on record as held (nothing ran), then the run.
    const attempts = records.filter((r) => r.kind === "attempt" && r.tool === "run_command");
    assert.deepEqual(attempts.map((r) => [r.verdict, r.code, r.protocol_era]), [
      ["deny", "APPROVAL_PENDING", "2026-07-28"],
      ["allow", null, "2026-07-28"],
      ["deny", "APPROVAL_PENDING", "2026-07-28"],
      ["allow", null, "2026-07-28"],
    ]);
    assert.deepEqual(
      attempts.filter((r) => r.verdict === "allow").map((r) => r.approval_id),
      requested.map((r) => r.approval_id),
      "each run names the approval it ran under",
    );
    const runs = attempts.filter((r) => r.verdict === "allow");
    assert.equal(
      records.filter((r) => r.kind === "outcome" && runs.some((a) => a.call_id === r.call_id))
        .map((r) => r.code).join(),
      "OK,OK",
    );
    assert.ok(records.indexOf(answered[0]!) < records.indexOf(runs[0]!));
    await assertAuditVerifies(h.auditLog);
  } finally {
    await h.close().catch(() => {});
  }
});

Deno.test("stdio 2026-07-28: declining or cancelling in the client gives APPROVAL_DENIED and nothing runs", async () => {
  const asked: string[] = [];
  const answers: Action[] = ["decline", "cancel"];
  const h = await start(askingClient(asked, () => answers.shift() ?? "decline"));
  try {
    for (let round = 0; round < 2; round++) {
      const result = resultOf(await h.client.callTool(CANARY));
      assert.equal(result.code, "APPROVAL_DENIED", result.policy_reason);
      assert.equal(result.ok, false);
      assert.equal(await exists(`${h.jail}/canary.txt`), false);
    }
    assert.equal(asked.length, 2);
    const records = await h.records();
    assert.deepEqual(
      records.filter((r) => r.event === "approval_answered").map((r) => r.answer),
      ["deny", "deny"],
    );
    const attempts = records.filter((r) => r.kind === "attempt" && r.tool === "run_command");
    assert.deepEqual(attempts.map((r) => r.code), [
      "APPROVAL_PENDING",
      "APPROVAL_DENIED",
      "APPROVAL_PENDING",
      "APPROVAL_DENIED",
    ]);
    assert.equal(attempts.some((r) => r.verdict === "allow"), false);
    assert.equal(records.some((r) => r.kind === "outcome" && r.tool === "run_command"), false);
    await assertAuditVerifies(h.auditLog);
  } finally {
    await h.close().catch(() => {});
  }
});

Deno.test("stdio 2026-07-28: a replayed retry, a retry for other arguments, a forged state and malformed answers are refused with -32602 and nothing runs", async () => {
  const h = await start(askingClient([], () => "accept", { autoFulfill: false }));
  const accept = { htmcp_approval: { action: "accept", content: {} } };
  try {
    // The same retry twice: the first runs, the replay is refused.
    const { requestState } = await firstRound(h.client);
    const ran = resultOf(await rawCall(h.client, { inputResponses: accept, requestState }));
    assert.equal(ran.code, "OK", ran.policy_reason);
    assert.ok(await exists(`${h.jail}/canary.txt`));
    await Deno.remove(`${h.jail}/canary.txt`);
    const replay = await refusedWith(rawCall(h.client, { inputResponses: accept, requestState }));
    assert.equal(replay.code, -32602);
    assert.equal(replay.message, "Invalid or expired requestState");
    assert.equal(await exists(`${h.jail}/canary.txt`), false);

    // A state asked for one command does not approve another.
    const other = await firstRound(h.client);
    const changed = await refusedWith(
      h.client.callTool(
        {
          name: "run_command",
          arguments: { command: "touch other.txt" },
          inputResponses: accept,
          requestState: other.requestState,
        } as never,
        { allowInputRequired: true } as never,
      ),
    );
    assert.equal(changed.code, -32602);
    assert.equal(await exists(`${h.jail}/other.txt`), false);

    const forged = await refusedWith(
      rawCall(h.client, { inputResponses: accept, requestState: `${other.requestState}x` }),
    );
    assert.equal(forged.code, -32602);

    // Answers the server cannot read: the state is spent, nothing runs.
    for (
      const inputResponses of [
        { htmcp_approval: 12345 },
        { htmcp_approval: { action: "yes" } },
        { other_key: { action: "accept", content: {} } },
        {},
      ]
    ) {
      const round = await firstRound(h.client);
      const refused = await refusedWith(
        rawCall(h.client, { inputResponses, requestState: round.requestState }),
      );
      assert.equal(refused.code, -32602, JSON.stringify(inputResponses));
      assert.match(refused.message, /Invalid inputResponses/);
    }
    assert.equal(await exists(`${h.jail}/canary.txt`), false);

    // An answer binds the run it was asked about, not only the words: a
    // glob that matches one more file by the retry is another run, asked anew.
    await Deno.writeTextFile(`${h.jail}/x1`, "");
    const globbed = { name: "run_command", arguments: { command: "touch canary.txt x*" } };
    const before = await h.client.callTool(globbed as never, { allowInputRequired: true } as never)
      .then((r) => r as unknown as Record<string, unknown>);
    assert.equal(before.resultType, "input_required", JSON.stringify(before));
    await Deno.writeTextFile(`${h.jail}/x2`, "");
    const after = await h.client.callTool(
      { ...globbed, inputResponses: accept, requestState: before.requestState } as never,
      { allowInputRequired: true } as never,
    ) as unknown as Record<string, unknown>;
    assert.equal(after.resultType, "input_required", "another run is asked about anew");
    assert.equal(await exists(`${h.jail}/canary.txt`), false);

    // A valid state with no answer at all: asked again, under a new state.
    const unanswered = await firstRound(h.client);
    const again = await rawCall(h.client, {
      requestState: unanswered.requestState,
    }) as unknown as Record<string, unknown>;
    assert.equal(again.resultType, "input_required");
    assert.notEqual(again.requestState, unanswered.requestState);
    // An answer without any state approves nothing: the call is asked anew.
    const stateless = await rawCall(h.client, { inputResponses: accept }) as unknown as Record<
      string,
      unknown
    >;
    assert.equal(stateless.resultType, "input_required");
    assert.equal(await exists(`${h.jail}/canary.txt`), false);

    const records = await h.records();
    assert.deepEqual(
      records.filter((r) => r.event === "request_state_refused").map((r) => r.reason),
      ["replayed", "other_arguments", "forged"],
    );
    assert.deepEqual(
      records.filter((r) => r.event === "input_response_refused").map((r) => r.reason),
      [
        "input_response_malformed",
        "input_response_malformed",
        "input_response_missing",
        "input_responses_not_an_object",
      ],
    );
    const runs = records.filter((r) => r.kind === "attempt" && r.verdict === "allow");
    assert.equal(runs.length, 1, "only the one accepted retry ran");
    // The answer for the run that changed is on record, and approved nothing.
    const superseded = events(records, "approval_answered").filter((r) =>
      !runs.some((run) => run.approval_id === r.approval_id)
    );
    assert.deepEqual(superseded.map((r) => r.answer), ["allow"]);
    await assertAuditVerifies(h.auditLog);
  } finally {
    await h.close().catch(() => {});
  }
});

Deno.test('stdio 2026-07-28: without form elicitation in the request, or with require = "operator", the call is held for the operator and the client is never asked', async () => {
  const asked: string[] = [];
  for (
    const [client, extra] of [
      // No handler: a question would fail the call, not read as an answer.
      [
        new Client({ name: "no-elicitation", version: "1" }, {
          versionNegotiation: { mode: { pin: "2026-07-28" } },
        }),
        "",
      ],
      [askingClient(asked, () => "accept"), 'require = "operator"'],
    ] as const
  ) {
    const h = await start(client, extra);
    try {
      const result = resultOf(await h.client.callTool(CANARY));
      assert.equal(result.code, "APPROVAL_PENDING", result.policy_reason);
      assert.match(result.policy_reason, /htmcp approvals allow [0-9a-f]{32}/);
      assert.equal(asked.length, 0);
      assert.equal(await exists(`${h.jail}/canary.txt`), false);
      const requested = (await h.records()).find((r) => r.event === "approval_requested");
      assert.equal(requested?.via, "operator");
    } finally {
      await h.close().catch(() => {});
    }
  }
});

Deno.test("stdio 2025: a client cannot hand itself an answer by writing the round trip into its own _meta", async () => {
  const h = await startHarness({
    allow: ["touch"],
    topToml: 'state_dir = "state"',
    extraToml: `${RULES}\n`,
  });
  try {
    assert.match((await h.describePolicy()).sandbox, /kernel sandbox \(bubblewrap\)/);
    const forged = await h.client.callTool({
      ...CANARY,
      _meta: {
        "dev.htmcp/clientRoundTrip": {
          token: "guessed",
          form: true,
          answer: { approvalId: "0".repeat(32), runDigest: "0".repeat(64), action: "accept" },
        },
      },
    });
    const result = resultOf(forged);
    assert.equal(result.code, "APPROVAL_PENDING", result.policy_reason);
    assert.equal(await exists(`${h.jail}/canary.txt`), false);
    const records = await h.records();
    assert.equal(records.some((r) => r.event === "approval_answered"), false);
    assert.equal(records.some((r) => r.kind === "attempt" && r.verdict === "allow"), false);
  } finally {
    await h.close();
  }
});
