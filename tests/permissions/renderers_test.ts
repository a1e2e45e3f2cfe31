import assert, { deepStrictEqual, equal } from "node:assert/strict";
import { makePolicy } from "../_helpers/policy.ts";
import type { Policy } from "../../src/config/types.ts";
import {
  DEFAULT_IMPORT_HOSTS,
  type PermissionSet,
  permissionSetFor,
  permissionSetToJson,
  renderDenoFlags,
  SERVER_V8_FLAGS,
  workerPermissions,
} from "../../src/permissions/mod.ts";

const PROBE_ALL = new URL("./fixtures/probe_all.ts", import.meta.url).pathname;
const PROBE_IN_WORKER = new URL("./fixtures/probe_in_worker.ts", import.meta.url).pathname;

interface Scene {
  dir: string;
  jail: string;
  policy: Policy;
  set: PermissionSet;
  spec: Record<string, string>;
}

async function withScene(fn: (scene: Scene) => Promise<void>): Promise<void> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-render-" }));
  try {
    const jail = `${dir}/jail`;
    await Deno.mkdir(jail);
    await Deno.writeTextFile(`${jail}/notes.txt`, "hello\n");
    await Deno.writeTextFile(`${dir}/secret.txt`, "outside the read set\n");
    await Deno.mkdir(`${dir}/log`);
    const policy = makePolicy({
      jailRoot: jail,
      allow: ["echo", "true"],
      auditLog: `${dir}/log/audit.jsonl`,
      overrides: { envPass: ["LANG"] },
    });
    const result = permissionSetFor(policy, { transport: "stdio", launcherPaths: [] });
    if (!result.ok) throw new Error(result.reason);
    const spec = {
      readOk: `${jail}/notes.txt`,
      readDenied: `${dir}/secret.txt`,
      writeOk: `${dir}/log/audit.jsonl`,
      writeDenied: `${jail}/canary`,
      runOk: policy.allowlist.get("true")!.path,
      runDenied: "/usr/bin/id",
      envOk: "HTMCP_POLICY_FILE",
      envDenied: "HTMCP_TEST_SECRET",
      netDenied: "http://127.0.0.1:59999/",
    };
    await fn({ dir, jail, policy, set: result.set, spec });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function runJson(args: string[]): Promise<Record<string, string>> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    env: { HTMCP_TEST_SECRET: "s3cret", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  assert(output.success, `probe failed: ${new TextDecoder().decode(output.stderr)}`);
  return JSON.parse(text);
}

const EXPECTED = {
  readOk: "ok",
  readDenied: "NotCapable",
  writeOk: "ok",
  writeDenied: "NotCapable",
  runOk: "ok",
  runDenied: "NotCapable",
  envOk: "ok",
  envDenied: "NotCapable",
  netDenied: "NotCapable",
  listenAny: "NotCapable",
  importDefaultHost: "TypeError", // Deno wraps the NotCapable of an import in a TypeError
  sys: "NotCapable",
  kill: "NotCapable",
  procRead: "NotCapable",
};

Deno.test("renderDenoFlags() renders every grant, --no-prompt, and explicit denials", async () => {
  await withScene(({ set, jail, dir, policy }) => {
    const flags = renderDenoFlags(set);
    equal(flags[0], "--no-prompt");
    const paths = [...policy.allowlist.values()].map((c) => c.path);
    assert(flags.includes(`--allow-run=${paths.join(",")}`));
    assert(flags.includes(`--allow-write=${dir}/log/audit.jsonl`));
    assert(flags.some((flag) => flag.startsWith("--allow-read=") && flag.includes(jail)));
    assert(flags.includes("--deny-net"));
    assert(flags.includes("--deny-sys") && flags.includes("--deny-ffi"));
    assert(flags.includes(`--deny-import=${DEFAULT_IMPORT_HOSTS.join(",")}`));
    assert(flags.some((flag) => flag.startsWith("--deny-write=") && flag.includes(jail)));
    assert(!flags.some((flag) => flag === "-A" || flag === "--allow-all" || flag.endsWith("=")));
    return Promise.resolve();
  });
});

/** V8's heap limit (old generation plus young) of a `deno run` with `flags`, in bytes. */
async function heapSizeLimit(flags: readonly string[]): Promise<number> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      ...flags,
      // The same old generation either way, so only the young generation differs.
      "--v8-flags=--max-old-space-size=64",
      `import v8 from "node:v8"; console.log(v8.getHeapStatistics().heap_size_limit);`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(output.success, new TextDecoder().decode(output.stderr));
  return Number(new TextDecoder().decode(output.stdout).trim());
}

Deno.test("renderDenoFlags() ends with the collector settings, which V8 applies", async () => {
  await withScene(async ({ set }) => {
    const flags = renderDenoFlags(set);
    equal(flags.at(-1), SERVER_V8_FLAGS);
    // The semi-space cap shows in the heap limit, which counts the young
    // generation's capacity: smaller than V8's default young generation.
    const capped = await heapSizeLimit([SERVER_V8_FLAGS]);
    const defaults = await heapSizeLimit([]);
    assert(capped > 0 && capped < defaults, `capped ${capped}, default ${defaults}`);
  });
});

Deno.test("workerPermissions() mirrors the set and denies sys, ffi and import", async () => {
  await withScene(({ set }) => {
    const worker = workerPermissions(set);
    deepStrictEqual(worker.run, set.run.map((g) => g.value));
    deepStrictEqual(worker.read, set.read.map((g) => g.value));
    equal(worker.net, false);
    equal(worker.sys, false);
    equal(worker.ffi, false);
    equal(worker.import, false);
    return Promise.resolve();
  });
});

Deno.test("permissionSetToJson() carries reasons, never-granted kinds and the flags", async () => {
  await withScene(({ set }) => {
    const json = JSON.parse(JSON.stringify(permissionSetToJson(set)));
    equal(json.transport, "stdio");
    assert(json.run.every((g: { reason: string }) => g.reason.length > 0));
    deepStrictEqual(Object.keys(json.never_granted).sort(), ["ffi", "import", "sys"]);
    deepStrictEqual(json.flags, [...renderDenoFlags(set)]);
    return Promise.resolve();
  });
});

Deno.test("the rendered flags, run for real, allow the set and refuse everything else with NotCapable", async () => {
  await withScene(async ({ set, spec, jail }) => {
    const results = await runJson([
      "run",
      ...renderDenoFlags(set),
      PROBE_ALL,
      JSON.stringify(spec),
    ]);
    deepStrictEqual(results, EXPECTED);
    await assert.rejects(
      Deno.stat(`${jail}/canary`),
      Deno.errors.NotFound,
      "nothing was written in the jail",
    );
  });
});

Deno.test("the Worker form of the same set, started broad, refuses exactly what the flags refuse", async () => {
  await withScene(async ({ set, spec, jail }) => {
    const results = await runJson([
      "run",
      "--allow-all",
      "--unstable-worker-options",
      PROBE_IN_WORKER,
      JSON.stringify(workerPermissions(set)),
      JSON.stringify(spec),
    ]);
    deepStrictEqual(results, EXPECTED);
    await assert.rejects(Deno.stat(`${jail}/canary`), Deno.errors.NotFound);
  });
});
