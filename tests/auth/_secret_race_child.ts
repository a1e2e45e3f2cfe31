/**
 * Child process for the secret-creation race test: waits until the agreed
 * instant, then loads-or-creates the secret and prints its SHA-256.
 * Usage: deno run --allow-read=DIR --allow-write=DIR _secret_race_child.ts DIR START_MS
 */
import { createHash } from "node:crypto";
import { loadOrCreateSecret } from "../../src/auth/state/mod.ts";

const [dir, start] = Deno.args;
if (dir === undefined || start === undefined) throw new Error("usage: DIR START_MS");
while (Date.now() < Number(start)) {
  // spin: every child leaves the gate within the same millisecond
}
const result = await loadOrCreateSecret(dir);
if (!result.ok) {
  console.log(`error ${result.message}`);
  Deno.exit(1);
}
console.log(
  `${result.created ? "created" : "read"} ${createHash("sha256").update(result.key).digest("hex")}`,
);
