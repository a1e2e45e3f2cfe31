/**
 * Telemetry off costs nothing to load: no module outside the export itself
 * imports the OpenTelemetry SDK, and the export is reached only through the
 * dynamic import in `sink.ts`, taken when `[telemetry]` is set.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory) yield* sources(`${path}/`);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

Deno.test("only src/telemetry/otel.ts imports @opentelemetry, and only sink.ts loads it, lazily", async () => {
  const importers: string[] = [];
  const otelLoaders: string[] = [];
  for await (const path of sources(SRC)) {
    const text = await Deno.readTextFile(path);
    const relative = path.slice(SRC.length);
    if (/from\s+["']@opentelemetry\//.test(text) || /import\(\s*["']@opentelemetry\//.test(text)) {
      importers.push(relative);
    }
    if (/["']\.{1,2}\/(?:telemetry\/)?otel\.ts["']/.test(text)) otelLoaders.push(relative);
    // A static import of the export would load the SDK with telemetry off.
    assert.doesNotMatch(text, /^import[^;]*["'][^"']*otel\.ts["']/m, relative);
  }
  assert.deepEqual(importers, ["telemetry/otel.ts"]);
  assert.deepEqual(otelLoaders, ["telemetry/sink.ts"]);
  const sink = await Deno.readTextFile(`${SRC}telemetry/sink.ts`);
  assert.match(
    sink,
    /if \(settings === undefined\) return current;\s+\/\/[^\n]*\n\s+const \{ startOtelExport \} = await import\("\.\/otel\.ts"\);/,
  );
});
