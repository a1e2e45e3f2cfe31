import assert from "node:assert/strict";
import { boundUnread } from "../../../src/transport/http/unread_bound.ts";
import { onBodyCancel } from "../../../src/transport/http/body_cancel.ts";

function source(chunks: number, size: number, end = false) {
  let cancelled = false;
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (; sent < chunks; sent++) controller.enqueue(new Uint8Array(size));
      if (end) controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}

Deno.test("boundUnread() closes an answer whose unread bytes pass the bound, and cancels its source", async () => {
  const src = source(20, 100);
  let overflowed = 0;
  const bounded = boundUnread(
    new Response(src.stream, { headers: { "content-type": "text/event-stream" } }),
    1_000,
    () => overflowed++,
  );
  // Nobody reads: the pump fills the queue past 1,000 bytes.
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(overflowed, 1);
  assert.equal(src.cancelled(), true);
  await assert.rejects(bounded.response.text(), /left more than 1000 bytes unread/);
});

Deno.test("boundUnread() passes an answer within the bound through whole", async () => {
  const src = source(20, 100, true);
  let overflowed = 0;
  const bounded = boundUnread(new Response(src.stream), 10_000, () => overflowed++);
  const bytes = new Uint8Array(await bounded.response.arrayBuffer());
  assert.equal(bytes.byteLength, 2_000);
  assert.equal(overflowed, 0);
  assert.equal(src.cancelled(), false);
});

Deno.test("abandon() cancels the route's body once; onBodyCancel() runs its hook only on a cancel", async () => {
  let hooked = 0;
  const src = source(1, 10);
  const wrapped = onBodyCancel(new Response(src.stream), () => hooked++);
  const bounded = boundUnread(wrapped, 0, () => {});
  bounded.abandon("gone");
  bounded.abandon("gone again");
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(hooked, 1);
  assert.equal(src.cancelled(), true);

  let untouched = 0;
  const finished = onBodyCancel(new Response("done"), () => untouched++);
  assert.equal(await finished.text(), "done");
  assert.equal(untouched, 0);
});
