import { deepEqual, equal, ok } from "node:assert/strict";
import { MAX_ARGV_WORDS, snapshotCommandInput } from "../../src/tools/snapshot.ts";

Deno.test("snapshotCommandInput reads argv, each of its words and stdin exactly once", () => {
  const reads: string[] = [];
  const words = ["grep", "a b", "f"];
  const argv = new Proxy(words, {
    get(target, key, receiver) {
      reads.push(`argv.${String(key)}`);
      return Reflect.get(target, key, receiver);
    },
  });
  const raw = {
    get argv() {
      reads.push("argv");
      return argv;
    },
    get stdin() {
      reads.push("stdin");
      return "text";
    },
  };
  const snap = snapshotCommandInput(raw);
  ok(snap.ok);
  deepEqual(snap.input.command, ["grep", "a b", "f"]);
  equal(reads.filter((r) => r === "argv").length, 1);
  equal(reads.filter((r) => r === "stdin").length, 1);
  equal(reads.filter((r) => r === "argv.length").length, 1);
  for (const index of ["0", "1", "2"]) {
    equal(reads.filter((r) => r === `argv.${index}`).length, 1, index);
  }
  // Later changes to the caller's array do not reach the snapshot.
  words[0] = "rm";
  deepEqual(snap.input.command, ["grep", "a b", "f"]);
  ok(Object.isFrozen(snap.input.command));
  deepEqual(snap.input.stdin, new TextEncoder().encode("text"));
});

Deno.test("snapshotCommandInput refuses an empty, oversized or non-string argv", () => {
  for (const argv of [[], [1], ["ls", null], new Array(MAX_ARGV_WORDS + 1).fill("x"), "ls"]) {
    const snap = snapshotCommandInput({ argv });
    equal(snap.ok, false, JSON.stringify(argv).slice(0, 40));
  }
  const long = snapshotCommandInput({ argv: ["echo", "x".repeat(16_384)] });
  equal(long.ok, false);
});

Deno.test("snapshotCommandInput counts stdin in UTF-8 bytes", () => {
  // 524,289 two-byte characters: under the limit in code units, over it in bytes.
  const snap = snapshotCommandInput({ command: "cat", stdin: "é".repeat(524_289) });
  equal(snap.ok, false);
  ok(!snap.ok && /1048578 bytes long/.test(snap.reason));
});
