/**
 * The record store on real files: owner-only modes, atomic replace, the
 * cross-process lock (a second process waits for the first), and names that
 * cannot leave the folder.
 */
import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import { RecordStore } from "../../src/state/mod.ts";

async function withStore(fn: (store: RecordStore, root: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-store-" });
  try {
    await fn(new RecordStore(`${dir}/state`), `${dir}/state`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("records are owner-only files in owner-only folders, replaced whole", async () => {
  await withStore(async (store, root) => {
    await store.write("things", "one", { n: 1 });
    await store.write("things", "one", { n: 2 });
    deepEqual(await store.read("things", "one"), { n: 2 });
    equal((Deno.statSync(root).mode ?? 0) & 0o777, 0o700);
    equal((Deno.statSync(`${root}/things`).mode ?? 0) & 0o777, 0o700);
    equal((Deno.statSync(`${root}/things/one.json`).mode ?? 0) & 0o777, 0o600);
    // No temporary file is left behind by a replace.
    deepEqual([...Deno.readDirSync(`${root}/things`)].map((e) => e.name).sort(), ["one.json"]);
    deepEqual(await store.list("things"), ["one"]);
    await store.remove("things", "one");
    equal(await store.read("things", "one"), null);
    await store.remove("things", "one");
  });
});

Deno.test("a kind or id that is not one plain file name is refused before any file is touched", async () => {
  await withStore(async (store, root) => {
    for (const bad of ["../x", "a/b", "", ".lock", "x".repeat(65)]) {
      await rejects(store.write("things", bad, {}), RangeError, bad);
      await rejects(store.read(bad, "id"), RangeError, bad);
    }
    deepEqual([...Deno.readDirSync(root)].map((e) => e.name), ["things"]);
  });
});

Deno.test("a state dir that others may write is refused", async () => {
  await withStore(async (_store, root) => {
    await Deno.mkdir(root, { mode: 0o700 });
    await Deno.chmod(root, 0o777);
    await rejects(new RecordStore(root).write("things", "one", {}), /writable by other users/);
  });
});

Deno.test("withLock excludes another process until it returns", async () => {
  await withStore(async (store, root) => {
    await store.write("things", "seed", {});
    const marker = `${root}/order.txt`;
    const code = `
      const lock = await Deno.open(${
      JSON.stringify(`${root}/things/.lock`)
    }, { read: true, write: true });
      await lock.lock(true);
      await Deno.writeTextFile(${JSON.stringify(marker)}, "child\\n", { append: true });
      lock.close();`;
    let child: Deno.ChildProcess | undefined;
    await store.withLock("things", async () => {
      child = new Deno.Command(Deno.execPath(), {
        args: ["eval", code],
        stdout: "null",
        stderr: "inherit",
      }).spawn();
      // Give the child ample time to reach its lock call; it must still be waiting.
      await new Promise((resolve) => setTimeout(resolve, 700));
      await Deno.writeTextFile(marker, "parent\n", { append: true });
    });
    ok(child);
    equal((await child.status).code, 0);
    equal(await Deno.readTextFile(marker), "parent\nchild\n");
  });
});
