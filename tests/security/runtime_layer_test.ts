/**
 * The second layer must catch our own bugs. Each test runs the real server
 * pipeline in a real subprocess under the Deno flags generated from a policy
 * (never -A), hands it a policy that a bug in one of our layers would
 * produce, and shows that Deno refuses with NotCapable, that the refusal
 * becomes a safe result (a code and a sentence, no crash, no stack trace),
 * that it is audited, and that nothing ran (canary files).
 */
import assert, { equal } from "node:assert/strict";
import { loadPolicy } from "../../src/config/mod.ts";
import { buildPermissionSet, renderDenoFlags } from "../../src/permissions/mod.ts";
import { PATH_CHECK_ONLY_TOML, prepareJail } from "../_helpers/jail.ts";

const BYPASS = new URL("../permissions/fixtures/bypass.ts", import.meta.url).pathname;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

interface Scene {
  dir: string;
  policyFile: string;
  flags: readonly string[];
}

/** The users' default: the kernel sandbox. */
const BWRAP_TOML = '[sandbox]\nmode = "bwrap"\n';

async function withScene(
  extraToml: string,
  fn: (scene: Scene) => Promise<void>,
  sandboxToml = BWRAP_TOML,
): Promise<void> {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-layer-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    await Deno.mkdir(`${dir}/log`);
    const policyFile = `${dir}/policy.toml`;
    await Deno.writeTextFile(
      policyFile,
      `jail_root = "jail"\naudit_log = "log/audit.jsonl"\n[allowlist]\ncommands = ["true", "cat"]\n${sandboxToml}${extraToml}`,
    );
    const loaded = await loadPolicy({ policyFile, env: {} });
    if (!loaded.ok) throw new Error(loaded.message);
    const built = await buildPermissionSet(loaded.policy);
    if (!built.ok) throw new Error(built.reason);
    await fn({ dir, policyFile, flags: renderDenoFlags(built.set) });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function bypass(scene: Scene, scenario: string, arg = ""): Promise<Record<string, unknown>> {
  assert(!scene.flags.includes("--allow-all") && !scene.flags.includes("-A"));
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...scene.flags, "--config", CONFIG, BYPASS, scene.policyFile, scenario, arg],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  equal(output.code, 0, `the server process must not crash: ${stderr}`);
  assert.doesNotMatch(stderr, /Uncaught| {4}at /, "no uncaught error or stack trace");
  return JSON.parse(new TextDecoder().decode(output.stdout));
}

async function auditRecords(dir: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(`${dir}/log/audit.jsonl`);
  return text.trim().split("\n").map((line) => JSON.parse(line));
}

const noStackTrace = (value: unknown) =>
  assert.doesNotMatch(JSON.stringify(value), /\n\s+at |\.ts:\d+/);

Deno.test("an allowlist bug that admits `touch` is refused by Deno: RUNTIME_DENIED, audited, canary absent", async () => {
  await withScene("", async (scene) => {
    const result = await bypass(scene, "exec-unlisted", "canary");
    equal(result.code, "RUNTIME_DENIED", JSON.stringify(result));
    equal(result.ok, false);
    equal(result.stdout, "");
    noStackTrace(result);
    await assert.rejects(
      Deno.stat(`${scene.dir}/jail/canary`),
      Deno.errors.NotFound,
      "touch never ran",
    );
    const records = await auditRecords(scene.dir);
    const outcome = records.find((r) => r.kind === "outcome" && r.code === "RUNTIME_DENIED");
    assert(outcome !== undefined, `the refusal is audited: ${JSON.stringify(records)}`);
  });
});

Deno.test("a jail-root bug pointing at /etc cannot read outside the grant: refused with a jail code, audited, nothing ran", async () => {
  await withScene("", async (scene) => {
    const result = await bypass(scene, "read-outside");
    if (result.context === "refused") {
      // Deno refused even the jail's owner lookup, so the server never started.
      assert.match(String(result.message), /jail root "\/etc".*Deno's permissions/);
      noStackTrace(result);
      return;
    }
    assert(
      ["CWD_ESCAPE", "PATH_ESCAPE", "RUNTIME_DENIED"].includes(result.code as string),
      JSON.stringify(result),
    );
    equal(result.ok, false);
    equal(result.stdout, "", "no byte of /etc/passwd came back");
    noStackTrace(result);
    const records = await auditRecords(scene.dir);
    assert(records.some((r) => r.code === result.code), "the refusal is audited");
    // Layer 2 alone: the sandbox would refuse a jail at /etc before Deno is asked.
  }, PATH_CHECK_ONLY_TOML);
});

Deno.test("an audit-path bug cannot write elsewhere: the server refuses to start, one sentence, no file", async () => {
  await withScene("", async (scene) => {
    const elsewhere = `${scene.dir}/elsewhere.jsonl`;
    const result = await bypass(scene, "audit-elsewhere", elsewhere);
    equal(result.context, "refused");
    assert.match(String(result.message), /audit log/i);
    noStackTrace(result);
    await assert.rejects(
      Deno.stat(elsewhere),
      Deno.errors.NotFound,
      "no audit file was created elsewhere",
    );
  });
});

Deno.test("an HTTP server granted one port cannot reach another, nor the same port by another name", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  await withScene(
    `[http]\nlisten = "127.0.0.1:${port}"\n[auth]\nmode = "none"\n`,
    async (scene) => {
      assert(scene.flags.includes(`--allow-net=127.0.0.1:${port}`), scene.flags.join(" "));
      const result = await bypass(scene, "fetch-other-port", String(port + 1));
      assert.deepEqual(result, {
        ownPort: "ok",
        otherPort: "NotCapable",
        listenOther: "NotCapable",
        localhostAlias: "NotCapable",
      });
    },
  );
});
