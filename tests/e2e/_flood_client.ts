/**
 * A connection flood, run as its own process: opens `count` idle TCP
 * connections to `port` on 127.0.0.1 (never sending a byte), holds them for
 * `holdMs`, and prints one JSON line: how many opened, how many failed to
 * open, how many the server closed while held.
 *
 * Usage: deno run --allow-net=127.0.0.1 _flood_client.ts PORT COUNT HOLD_MS
 */
const [port, count, holdMs] = Deno.args.map(Number) as [number, number, number];
const conns: Deno.Conn[] = [];
let failed = 0;
for (let i = 0; i < count; i++) {
  try {
    conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
  } catch {
    failed++;
  }
}
let closedByServer = 0;
const watch = conns.map(async (conn) => {
  try {
    const n = await conn.read(new Uint8Array(64));
    if (n === null) closedByServer++;
  } catch {
    closedByServer++;
  }
});
await Promise.race([Promise.all(watch), new Promise((resolve) => setTimeout(resolve, holdMs))]);
console.log(JSON.stringify({ opened: conns.length, failed, closedByServer }));
for (const conn of conns) {
  try {
    conn.close();
  } catch {
    // closed by the server already
  }
}
Deno.exit(0);
