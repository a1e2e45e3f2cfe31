/**
 * The import check finds what it promises on a synthetic graph (so a clean
 * run of `deno task check` means something), and passes on the real one.
 */
import assert from "node:assert/strict";
import {
  checkImports,
  cyclesOf,
  type ImportEdge,
  LAYERS,
  LIGHT_ENTRIES,
  readImportGraph,
  SEALED,
} from "../../scripts/check_imports.ts";

const edge = (from: string, to: string, typeOnly = false): ImportEdge => ({ from, to, typeOnly });

Deno.test("cyclesOf() finds a cycle of files and ignores a chain", () => {
  assert.deepEqual(cyclesOf([edge("a.ts", "b.ts"), edge("b.ts", "c.ts")]), []);
  assert.deepEqual(
    cyclesOf([edge("a.ts", "b.ts"), edge("b.ts", "c.ts"), edge("c.ts", "a.ts")]),
    [["a.ts", "b.ts", "c.ts"]],
  );
});

Deno.test("checkImports() reports a type-only file cycle inside one folder", () => {
  const report = checkImports([
    edge("redact/a.ts", "redact/b.ts", true),
    edge("redact/b.ts", "redact/a.ts"),
  ]);
  assert.deepEqual(report.fileCycles, [["redact/a.ts", "redact/b.ts"]]);
});

Deno.test("checkImports() reports a folder cycle and the upward arrow that makes it", () => {
  const report = checkImports([
    edge("tools/x.ts", "policy/mod.ts"),
    edge("policy/y.ts", "tools/z.ts"),
  ]);
  assert.deepEqual(report.folderCycles, [["policy", "tools"]]);
  assert.deepEqual(report.upward.map((e) => `${e.from} -> ${e.to}`), [
    "policy/y.ts -> tools/z.ts",
  ]);
  assert.equal(report.pastModTs, 1);
  assert.equal(report.crossFolder, 2);
});

Deno.test("checkImports() lets every layer use the vocabulary, and keeps the vocabulary pure", () => {
  const report = checkImports([
    edge("policy/evaluate.ts", "config/types.ts", true),
    edge("config/load.ts", "policy/mod.ts"),
    edge("config/types.ts", "policy/mod.ts", true),
  ]);
  // policy -> config/types.ts is not an arrow into the config folder: no cycle.
  assert.deepEqual(report.folderCycles, []);
  assert.deepEqual(report.upward, []);
  assert.deepEqual(report.impureVocabulary.map((e) => e.from), ["config/types.ts"]);
});

Deno.test("checkImports() treats a known arrow as known only while it imports types", () => {
  const known = new Map([["tools/*.ts -> server/context.ts", "types only, for this test"]]);
  const typeOnly = checkImports([edge("tools/new_tool.ts", "server/context.ts", true)], known);
  assert.equal(typeOnly.known.length, 1);
  assert.equal(typeOnly.upward.length, 0);
  const runtime = checkImports([edge("tools/new_tool.ts", "server/context.ts")], known);
  assert.equal(runtime.known.length, 0);
  assert.equal(runtime.upward.length, 1);
  // The wildcard stands for one file name, not a folder path.
  const deeper = checkImports([edge("tools/sub/x.ts", "server/context.ts", true)], known);
  assert.equal(deeper.upward.length, 1);
  // Without the entry the same type-only arrow fails.
  const unknown = checkImports([edge("tools/new_tool.ts", "server/context.ts", true)], new Map());
  assert.equal(unknown.upward.length, 1);
});

Deno.test("checkImports() refuses an import into a sealed folder past its mod.ts, from any folder", () => {
  const sealed = new Set(["protocol"]);
  const report = checkImports(
    [
      edge("transport/stdio.ts", "protocol/mod.ts"),
      edge("transport/http/server.ts", "protocol/face.ts"),
      edge("cli/serve.ts", "protocol/sub/mod.ts", true),
      // Inside the folder, files import each other freely.
      edge("protocol/face.ts", "protocol/request_state.ts"),
      // An unsealed folder is still entered anywhere (counted, not refused).
      edge("transport/stdio.ts", "tools/caller.ts"),
    ],
    new Map(),
    sealed,
    new Map(),
  );
  assert.deepEqual(report.pastSealed.map((e) => `${e.from} -> ${e.to}`), [
    "transport/http/server.ts -> protocol/face.ts",
    "cli/serve.ts -> protocol/sub/mod.ts",
  ]);
  assert.equal(report.pastModTs, 2);
});

Deno.test("checkImports() lets other folders in through a declared light entry, and through no other file", () => {
  const report = checkImports(
    [
      edge("cli/serve.ts", "telemetry/log.ts"),
      edge("cli/serve.ts", "telemetry/exporter.ts"),
    ],
    new Map(),
    new Set(["telemetry"]),
    new Map([["telemetry/log.ts", "the operator log without the SDK"]]),
  );
  assert.deepEqual(report.pastSealed.map((e) => `${e.from} -> ${e.to}`), [
    "cli/serve.ts -> telemetry/exporter.ts",
  ]);
});

Deno.test("a folder missing from the layer table is an upward arrow, so the table names every concern", () => {
  const report = checkImports([edge("newthing/a.ts", "streams/mod.ts")]);
  assert.equal(report.upward.length, 1);
});

Deno.test("the real src/ import graph has no cycles, no upward arrows, a pure vocabulary", async () => {
  const report = checkImports(await readImportGraph());
  assert.deepEqual(report.fileCycles, []);
  assert.deepEqual(report.folderCycles, []);
  assert.deepEqual(report.upward, []);
  assert.deepEqual(report.impureVocabulary, []);
  assert.deepEqual(report.known, []);
  assert.deepEqual(report.pastSealed, []);
});

Deno.test("every light entry is a file of a sealed folder, with its reason", async () => {
  for (const [entry, reason] of LIGHT_ENTRIES) {
    assert.ok(SEALED.has(entry.split("/")[0]!), `${entry} is in a sealed folder`);
    assert.ok(reason.length > 0, `${entry} says why`);
    const info = await Deno.stat(new URL(`../../src/${entry}`, import.meta.url));
    assert.ok(info.isFile, `src/${entry} is a file`);
  }
});

Deno.test("every sealed folder has a mod.ts and a place in the layer table", async () => {
  const layered = new Set(LAYERS.flat());
  for (const folder of SEALED) {
    assert.ok(layered.has(folder), `${folder} is in LAYERS`);
    const info = await Deno.stat(new URL(`../../src/${folder}/mod.ts`, import.meta.url));
    assert.ok(info.isFile, `src/${folder}/mod.ts is a file`);
  }
});
