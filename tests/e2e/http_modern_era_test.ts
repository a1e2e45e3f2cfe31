/**
 * MCP 2026-07-28 over HTTP against `htmcp serve --http` (a real child
 * process under the generated permission set): the SDK v2 client in the
 * stateless era, and raw requests for what a client library would never
 * send (header/body mismatches, a missing envelope, forged and replayed
 * request states). Every refusal is audited and runs nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { CommandResult } from "../../src/result/codes.ts";
import { argumentsDigest, RequestStateSealer } from "../../src/protocol/request_state.ts";
import { cleanUp, type ServerProcess, startServer } from "./_http_server.ts";
import { connectV2Http } from "./_v2_clients.ts";
import { exists } from "../_helpers/exists.ts";

const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Raw {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown>;
}

/** Posts one JSON-RPC message with the 2026 headers (overridable). */
async function post(
  url: string,
  message: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Raw> {
  const params = (message.params ?? {}) as Record<string, unknown>;
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": String(message.method),
      ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", ...message }),
  });
  const text = await response.text();
  const data = text.startsWith("{")
    ? JSON.parse(text)
    : JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? "{}");
  return { status: response.status, headers: response.headers, body: data };
}

function call(name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    id: crypto.randomUUID(),
    method: "tools/call",
    params: { name, arguments: args, _meta: ENVELOPE, ...extra },
  };
}

async function events(server: ServerProcess, name: string): Promise<Record<string, unknown>[]> {
  return (await server.records()).filter((r) => r.kind === "event" && r.event === name);
}

Deno.test("http 2026-07-28: the v2 client discovers the server, lists the tools in order with a private TTL, and runs and refuses commands with no session", async () => {
  const server = await startServer({ allow: ["echo", "touch"] });
  try {
    const client = await connectV2Http(server.url, "2026-07-28");
    assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
    assert.equal(client.getServerVersion()?.name, "htmcp");
    const ran = await client.callTool({
      name: "run_command",
      arguments: { command: "echo v2-http" },
    });
    assert.match((ran.structuredContent as unknown as CommandResult).stdout, /v2-http/);
    const denied = await client.callTool({
      name: "run_command",
      arguments: { command: "echo $(touch canary)" },
    });
    assert.equal(denied.isError, true);
    await client.close();

    const listed = await post(server.url, {
      id: 1,
      method: "tools/list",
      params: { _meta: ENVELOPE },
    });
    assert.equal(listed.status, 200);
    assert.equal(listed.headers.get("mcp-session-id"), null);
    const result = listed.body.result as Record<string, unknown>;
    assert.equal(result.resultType, "complete");
    assert.equal(result.cacheScope, "private");
    assert.ok(typeof result.ttlMs === "number" && result.ttlMs > 0);
    const names = (result.tools as { name: string }[]).map((tool) => tool.name);
    assert.deepEqual(names, [...names].sort());

    const discovered = await post(server.url, {
      id: 2,
      method: "server/discover",
      params: { _meta: ENVELOPE },
    });
    assert.equal(discovered.headers.get("mcp-session-id"), null);
    const discover = discovered.body.result as Record<string, unknown>;
    assert.ok((discover.supportedVersions as string[]).includes("2026-07-28"));
    assert.match(String(discover.instructions), /without a shell/);
    assert.equal(await exists(join(server.dir, "jail", "canary")), false);
  } finally {
    await cleanUp(server);
  }
});

Deno.test("http 2026-07-28: an Mcp-Method or Mcp-Name header that disagrees with the body is refused with -32020, audited, and nothing runs", async () => {
  const server = await startServer({ allow: ["touch"] });
  try {
    const byMethod = await post(server.url, call("run_command", { command: "touch canary" }), {
      "mcp-method": "tools/list",
    });
    assert.equal(byMethod.status, 400);
    assert.equal((byMethod.body.error as { code: number }).code, -32020);
    const byName = await post(server.url, call("run_command", { command: "touch canary" }), {
      "mcp-name": "explain_command",
    });
    assert.equal(byName.status, 400);
    assert.equal((byName.body.error as { code: number }).code, -32020);
    assert.equal(await exists(join(server.dir, "jail", "canary")), false);
    const records = await server.records();
    assert.equal(records.filter((r) => r.kind === "attempt").length, 0);
    const refused = await events(server, "protocol_refused");
    assert.equal(refused.length, 2);
    assert.deepEqual(refused.map((r) => r.jsonrpc_code), [-32020, -32020]);
    assert.equal(refused[0]?.mcp_method_header, "tools/list");
    assert.equal(refused[1]?.mcp_name_header, "explain_command");
    assert.equal(refused[0]?.protocol_era, "2026-07-28");
  } finally {
    await cleanUp(server);
  }
});

Deno.test("http 2026-07-28: a request naming the 2026 version without its _meta envelope is refused with -32602, audited, and nothing runs", async () => {
  const server = await startServer({ allow: ["touch"] });
  try {
    const refused = await post(server.url, {
      id: 7,
      method: "tools/call",
      params: { name: "run_command", arguments: { command: "touch canary" } },
    });
    assert.equal(refused.status, 400);
    assert.equal((refused.body.error as { code: number }).code, -32602);
    assert.equal(refused.headers.get("mcp-session-id"), null);
    assert.equal(await exists(join(server.dir, "jail", "canary")), false);
    assert.equal((await server.records()).filter((r) => r.kind === "attempt").length, 0);
    const audited = await events(server, "protocol_refused");
    assert.equal(audited.length, 1);
    assert.equal(audited[0]?.check, "envelope");
  } finally {
    await cleanUp(server);
  }
});

Deno.test("http 2026-07-28: a forged requestState is refused with the spec's error and nothing runs; a sealed one runs once and its replay is refused", async () => {
  const server = await startServer({ allow: ["touch"] });
  try {
    const args = { command: "touch canary" };
    const forged = await post(
      server.url,
      call("run_command", args, { requestState: "v1.eyJzIjoib2sifQ.AAAA", inputResponses: {} }),
    );
    assert.equal(forged.status, 200);
    const error = forged.body.error as { code: number; message: string; data: unknown };
    assert.equal(error.code, -32602);
    assert.equal(error.message, "Invalid or expired requestState");
    assert.equal(await exists(join(server.dir, "jail", "canary")), false);
    assert.equal((await server.records()).filter((r) => r.kind === "attempt").length, 0);

    // A state sealed with the server's own key (from its state dir), bound
    // to this caller, tool, arguments and policy.
    const opened = await RequestStateSealer.fromStateDir(join(server.dir, "state"));
    assert.ok(opened.ok);
    const policyHash = (await server.records())[0]?.policy_hash as string;
    const state = await opened.sealer.seal(
      {
        caller: "http:operator",
        tool: "run_command",
        argumentsDigest: await argumentsDigest(args),
        policyHash,
      },
      { approved: true },
      60_000,
    );
    const first = await post(
      server.url,
      call("run_command", args, { requestState: state, inputResponses: {} }),
    );
    assert.equal(
      ((first.body.result as Record<string, unknown>).structuredContent as CommandResult).code,
      "OK",
    );
    assert.equal(await exists(join(server.dir, "jail", "canary")), true);
    await Deno.remove(join(server.dir, "jail", "canary"));
    const replay = await post(
      server.url,
      call("run_command", args, { requestState: state, inputResponses: {} }),
    );
    assert.equal((replay.body.error as { code: number }).code, -32602);
    const otherArgs = await post(
      server.url,
      call("run_command", { command: "touch canary2" }, {
        requestState: state,
        inputResponses: {},
      }),
    );
    assert.equal((otherArgs.body.error as { code: number }).code, -32602);
    assert.equal(await exists(join(server.dir, "jail", "canary")), false);
    assert.equal(await exists(join(server.dir, "jail", "canary2")), false);
    const reasons = (await events(server, "request_state_refused")).map((r) => r.reason);
    assert.deepEqual(reasons, ["forged", "replayed", "other_arguments"]);
  } finally {
    await cleanUp(server);
  }
});

Deno.test("http 2026-07-28: a client that drops a running call's connection cancels it: the command is killed and the outcome is CANCELLED", async () => {
  const server = await startServer({ allow: ["sleep"] });
  try {
    const controller = new AbortController();
    const pending = fetch(server.url, {
      method: "POST",
      signal: controller.signal,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "run_command",
      },
      body: JSON.stringify({ jsonrpc: "2.0", ...call("run_command", { command: "sleep 30" }) }),
    }).then(async (response) => await response.text());
    for (let i = 0; i < 100; i++) {
      if ((await server.records()).some((r) => r.kind === "attempt")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await assert.rejects(pending);
    let outcome: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && outcome === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      outcome = (await server.records()).find((r) => r.kind === "outcome");
    }
    assert.equal(outcome?.code, "CANCELLED");
  } finally {
    await cleanUp(server);
  }
});
