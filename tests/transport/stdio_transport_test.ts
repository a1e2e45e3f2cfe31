import assert from "node:assert/strict";
import { BoundedStdioTransport } from "../../src/transport/stdio_transport.ts";

function harness(maxMessageBytes: number, maxBacklogBytes: number, stall = false) {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const written: string[] = [];
  const never = new Promise<number>(() => {});
  const transport = new BoundedStdioTransport(readable, {
    write: (bytes) => {
      if (stall) return never;
      written.push(new TextDecoder().decode(bytes));
      return Promise.resolve(bytes.byteLength);
    },
  }, { maxMessageBytes, maxBacklogBytes });
  const received: unknown[] = [];
  transport.onmessage = (message) => received.push(message);
  let closed = false;
  transport.onclose = () => closed = true;
  const send = (text: string) => writer.write(new TextEncoder().encode(text));
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
  return { transport, written, received, send, settle, closed: () => closed, writer };
}

Deno.test("BoundedStdioTransport skips a message over the limit, answers -32600 with its id, and reads on", async () => {
  const h = harness(100, 10_000);
  await h.transport.start();
  const big = JSON.stringify({
    jsonrpc: "2.0",
    id: 5,
    method: "ping",
    params: { x: "y".repeat(500) },
  });
  // Split across chunks, as a pipe delivers it.
  await h.send(big.slice(0, 150));
  await h.send(`${big.slice(150)}\n{"jsonrpc":"2.0","id":6,"method":"ping"}\n`);
  await h.settle();
  assert.deepEqual(h.received, [{ jsonrpc: "2.0", id: 6, method: "ping" }]);
  const answer = JSON.parse(h.written[0] as string);
  assert.equal(answer.id, 5);
  assert.equal(answer.error.code, -32600);
  assert.match(answer.error.message, /larger than 100 bytes/);
  assert.equal(h.closed(), false);
});

Deno.test("BoundedStdioTransport answers a non-JSON line -32700 and a non-JSON-RPC line -32600; neither reaches the server", async () => {
  const h = harness(1_000, 10_000);
  await h.transport.start();
  await h.send(`not json\n{"hello":"world","id":3}\n`);
  await h.settle();
  assert.deepEqual(h.received, []);
  const [parse, invalid] = h.written.map((line) => JSON.parse(line));
  assert.equal(parse.error.code, -32700);
  assert.equal(parse.id, null);
  assert.equal(invalid.error.code, -32600);
  assert.equal(invalid.id, 3);
});

Deno.test("BoundedStdioTransport refuses a request whose id is in flight, and accepts it again once answered", async () => {
  const h = harness(1_000, 10_000);
  await h.transport.start();
  const ping = `{"jsonrpc":"2.0","id":"a","method":"ping"}\n`;
  await h.send(ping + ping);
  await h.settle();
  assert.equal(h.received.length, 1);
  assert.equal(JSON.parse(h.written[0] as string).error.code, -32600);
  await h.transport.send({ jsonrpc: "2.0", id: "a", result: {} });
  await h.send(ping);
  await h.settle();
  assert.equal(h.received.length, 2);
});

Deno.test("BoundedStdioTransport closes, with a reason, once its unwritten answers pass the backlog bound", async () => {
  const h = harness(1_000, 1_000, true);
  await h.transport.start();
  for (let i = 0; i < 5; i++) {
    await h.transport.send({ jsonrpc: "2.0", id: i, result: { pad: "z".repeat(300) } });
  }
  assert.equal(h.closed(), true);
  assert.match(h.transport.closeReason ?? "", /more than 1000 bytes of answers unread/);
});
