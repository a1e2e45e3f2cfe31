/**
 * A 2025 HTTP session's approval question goes on the stream of the call it
 * is about. It went on the session's standalone GET stream, which any token
 * of the same client may take (red team, round eight): a token without any
 * shell scope read the held command there, and the caller never got the
 * question. Through the real HTTP server, OAuth and raw Streamable HTTP.
 */
import { equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { PIN, startHttp } from "../transport/http/_harness.ts";
import { REDIRECT_URI, tokenForClient } from "../transport/http/_oauth.ts";

function headers(token: string, session?: string): Record<string, string> {
  return {
    authorization: `Bearer ${token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
    ...(session === undefined ? {} : { "mcp-session-id": session }),
  };
}

/** Reads the JSON-RPC messages of an SSE body, handing each to `seen`, until it ends or `stop`. */
async function readEvents(
  response: Response,
  seen: (message: Record<string, unknown>) => void,
): Promise<void> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        for (const line of buffer.slice(0, end).split("\n")) {
          if (line.startsWith("data: ")) seen(JSON.parse(line.slice(6)));
        }
        buffer = buffer.slice(end + 2);
      }
    }
  } catch {
    // cancelled
  }
}

Deno.test("2025 HTTP: the approval question goes on its call's stream, never to another token's GET stream", async () => {
  const h = await startHttp({
    allow: ["touch"],
    policy: {
      rules: [{
        command: "touch",
        denyArgs: ["canary.txt"],
        reason: "risky",
        enforce: "deny",
        decision: "prompt",
        justification: "risky",
      }],
      approval: { ttlMs: 60_000, waitMs: 300, require: "any" },
    },
  });
  try {
    const registered = await fetch(`${h.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "stream test",
        redirect_uris: [REDIRECT_URI],
        scope: "shell:read shell:execute audit:read",
        token_endpoint_auth_method: "none",
      }),
    });
    const clientId = (await registered.json()).client_id as string;
    const wide = await tokenForClient(h.url, clientId, "shell:read shell:execute", PIN);
    const narrow = await tokenForClient(h.url, clientId, "audit:read", PIN);

    const opened = await fetch(h.mcpUrl, {
      method: "POST",
      headers: headers(wide),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: { elicitation: { form: {} } },
          clientInfo: { name: "stream test", version: "0" },
        },
      }),
    });
    await opened.text();
    const session = opened.headers.get("mcp-session-id") ?? "";
    await (await fetch(h.mcpUrl, {
      method: "POST",
      headers: headers(wide, session),
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    })).text();

    // The narrower token holds the session's standalone stream.
    const stream = await fetch(h.mcpUrl, {
      method: "GET",
      headers: { ...headers(narrow, session), accept: "text/event-stream" },
    });
    const onStream: Record<string, unknown>[] = [];
    const streamRead = stream.status === 200
      ? readEvents(stream, (message) => onStream.push(message))
      : stream.body?.cancel();

    const call = await fetch(h.mcpUrl, {
      method: "POST",
      headers: headers(wide, session),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "run_command", arguments: { command: "touch canary.txt" } },
      }),
    });
    let result: Record<string, unknown> | null = null;
    let asked = false;
    await readEvents(call, (message) => {
      if (message.method === "elicitation/create") {
        asked = true;
        // The caller answers on its own token.
        fetch(h.mcpUrl, {
          method: "POST",
          headers: headers(wide, session),
          body: JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { action: "accept" } }),
        }).then((answer) => answer.text());
      }
      if (message.id === 5) result = message;
    });
    ok(asked, "the question came on the call's own stream");
    const structured = (result as { result?: { structuredContent?: { code?: string } } } | null)
      ?.result?.structuredContent;
    equal(structured?.code, "OK", JSON.stringify(result));
    ok(await Deno.stat(join(h.jail, "canary.txt")).then(() => true, () => false), "it ran once");
    equal(
      onStream.filter((message) => message.method === "elicitation/create").length,
      0,
      "the other token's stream saw no question",
    );
    await (await fetch(h.mcpUrl, { method: "DELETE", headers: headers(wide, session) })).text();
    await streamRead;
  } finally {
    await h.close();
  }
});
