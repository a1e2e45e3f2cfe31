import assert from "node:assert/strict";
import { HTMCP_ENV_NAMES } from "../../src/permissions/mod.ts";

/** Every `HTMCP_*` literal under `src/`, with the file that mentions it. */
async function mentionedNames(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.name.endsWith(".ts") && !path.includes("/src/permissions/")) {
        for (
          const match of (await Deno.readTextFile(path)).matchAll(/\bHTMCP_[A-Z0-9_]*[A-Z0-9]\b/g)
        ) {
          found.set(match[0], path);
        }
      }
    }
  };
  await walk(new URL("../../src", import.meta.url).pathname);
  return found;
}

Deno.test("HTMCP_ENV_NAMES grants every HTMCP_* name the source reads, so none fails NotCapable", async () => {
  for (const [name, file] of await mentionedNames()) {
    assert(
      HTMCP_ENV_NAMES.has(name),
      `${file} reads ${name}, which the permission set does not grant`,
    );
  }
});
