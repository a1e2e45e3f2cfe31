/**
 * The listener turns Nagle's algorithm off on every TCP connection it
 * serves: an answer leaves as several small writes, and with Nagle on each
 * after the first waited for the client's delayed acknowledgement (up to
 * 40 ms a call; `bench/http_bench.ts` shows the difference).
 */
import assert from "node:assert/strict";
import { noDelay } from "../../../src/transport/http/listener.ts";

Deno.test("noDelay() sets TCP_NODELAY on a TCP connection", () => {
  const calls: (boolean | undefined)[] = [];
  const conn = { setNoDelay: (on?: boolean) => calls.push(on) } as unknown as Deno.Conn;
  noDelay(conn);
  assert.deepEqual(calls, [true]);
});

Deno.test("noDelay() leaves a connection without the option (TLS) and a closed one as they are", () => {
  const tls = { handshake: () => Promise.resolve({}) } as unknown as Deno.Conn;
  noDelay(tls);
  const closed = {
    setNoDelay: () => {
      throw new Deno.errors.BadResource("closed");
    },
  } as unknown as Deno.Conn;
  noDelay(closed);
});

Deno.test("noDelay() works on a real accepted socket", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const client = Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
  const accepted = await listener.accept();
  try {
    assert.equal(typeof (accepted as Deno.TcpConn).setNoDelay, "function");
    noDelay(accepted);
  } finally {
    accepted.close();
    (await client).close();
    listener.close();
  }
});
