import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { loadPolicy } from "../../src/config/load.ts";
import { instructionsFor, MAX_INSTRUCTIONS_BYTES } from "../../src/server/instructions.ts";
import { makePolicy, resolveOnPath } from "../_helpers/policy.ts";

const SHIPPED = fileURLToPath(new URL("../../policy.toml", import.meta.url));
const bytes = (text: string) => new TextEncoder().encode(text).byteLength;

Deno.test("the shipped policy's instructions are under 2 KB and say what runs, the refused syntax, the confinement, the limits and how to do long work", async () => {
  const jail = await Deno.makeTempDir({ prefix: "htmcp-instr-" });
  try {
    const loaded = await loadPolicy({
      policyFile: SHIPPED,
      env: { HTMCP_JAIL_ROOT: jail },
    });
    assert.ok(loaded.ok, loaded.ok ? "" : loaded.message);
    const text = instructionsFor(loaded.policy, { mode: "bwrap", commandUid: 65534 });
    assert.ok(bytes(text) <= MAX_INSTRUCTIONS_BYTES, `${bytes(text)} bytes`);
    assert.ok(MAX_INSTRUCTIONS_BYTES < 2048);
    for (const name of loaded.policy.allowlist.keys()) assert.ok(text.includes(name), name);
    assert.match(text, /without a shell/);
    assert.match(text, /\$\(\.\.\.\), backticks/);
    assert.match(text, /inside the jail/);
    assert.match(text, new RegExp(`${loaded.policy.limits.timeoutMs / 1000} s`));
    assert.match(text, /Long-running work/);
    assert.match(text, /Never allowed: .*rm/);
    // Never the jail's real path, the audit log or the state dir.
    assert.ok(!text.includes(loaded.policy.jailRoot));
    assert.ok(!text.includes(jail));
    assert.ok(!text.includes(loaded.policy.auditLog));
    assert.ok(!text.includes(String(loaded.policy.stateDir)));
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("a policy with hundreds of long command names still gets instructions under 2 KB that point to describe_policy", async () => {
  const jail = await Deno.makeTempDir({ prefix: "htmcp-instr-" });
  try {
    const echo = resolveOnPath("echo");
    const allowlist = new Map(
      Array.from({ length: 400 }, (_, i) => {
        const name = `tool-with-a-rather-long-name-${String(i).padStart(3, "0")}`;
        return [name, { ...echo, name }] as const;
      }),
    );
    const policy = makePolicy({
      jailRoot: jail,
      deny: Array.from({ length: 30 }, (_, i) => `deny${i}`),
      overrides: { allowlist },
    });
    const text = instructionsFor(policy, { mode: "none", commandUid: 1000 });
    assert.ok(bytes(text) <= MAX_INSTRUCTIONS_BYTES, `${bytes(text)} bytes`);
    assert.match(text, /tool-with-a-rather-long-name-000/);
    assert.match(text, /and \d+ more \(describe_policy lists them\)/);
    assert.match(text, /Long-running work/);
    assert.match(text, /sandbox is OFF/);
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

Deno.test("the jail's real path is in the instructions only when show_jail_path says so", async () => {
  const jail = await Deno.makeTempDir({ prefix: "htmcp-instr-" });
  try {
    const hidden = makePolicy({ jailRoot: jail });
    const shown = makePolicy({ jailRoot: jail, overrides: { showJailPath: true } });
    const sandbox = { mode: "bwrap", commandUid: 65534 };
    assert.ok(!instructionsFor(hidden, sandbox).includes(hidden.jailRoot));
    assert.ok(instructionsFor(shown, sandbox).includes(shown.jailRoot));
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});
