/**
 * The floor of a cold start: a Deno program that answers the first
 * `initialize` request with a canned result and nothing else (no policy, no
 * SDK). What a server started by `deno run` cannot beat on this machine.
 *
 * @module
 */
const decoder = new TextDecoder();
let buffered = "";
for await (const chunk of Deno.stdin.readable) {
  buffered += decoder.decode(chunk, { stream: true });
  const newline = buffered.indexOf("\n");
  if (newline === -1) continue;
  const request = JSON.parse(buffered.slice(0, newline)) as {
    id: number | string;
    params?: { protocolVersion?: string };
  };
  const result = {
    protocolVersion: request.params?.protocolVersion ?? "2025-06-18",
    capabilities: {},
    serverInfo: { name: "floor", version: "0" },
  };
  await Deno.stdout.write(
    new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", id: request.id, result }) + "\n"),
  );
  buffered = buffered.slice(newline + 1);
}
