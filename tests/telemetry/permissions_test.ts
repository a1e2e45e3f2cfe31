/**
 * The OTLP collector's host:port is granted net only when `[telemetry]`
 * names it, in either transport; `htmcp permissions` and `htmcp check` show
 * the grant. Without the table no net grant is added at all.
 */
import assert from "node:assert/strict";
import { makePolicy } from "../_helpers/policy.ts";
import type { Policy } from "../../src/config/types.ts";
import { permissionSetFor } from "../../src/permissions/mod.ts";
import { prepareJail } from "../_helpers/jail.ts";

const LAUNCH = new URL("../../scripts/launch.ts", import.meta.url).pathname;

function withTelemetry(base: Policy, otlpEndpoint: string): Policy {
  return {
    ...base,
    telemetry: { otlpEndpoint, serviceName: "htmcp", metricsIntervalMs: 60_000 },
  };
}

function netOf(p: Policy, transport: "stdio" | "http"): string[] {
  const result = permissionSetFor(p, { transport, launcherPaths: [] });
  if (!result.ok) throw new Error(result.reason);
  return result.set.net.map((grant) => grant.value);
}

Deno.test("without [telemetry] no net grant is added; with it exactly the collector's host:port", async () => {
  const jail = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-perm-otel-" }));
  try {
    const base = makePolicy({ jailRoot: jail, auditLog: "/var/log/htmcp/audit.jsonl" });
    assert.deepEqual(netOf(base, "stdio"), [], "stdio without telemetry has no net at all");
    const http = { ...base, http: { ...base.http, listen: "127.0.0.1:8443" } };
    assert.deepEqual(netOf(http, "http"), ["127.0.0.1:8443"]);

    assert.deepEqual(netOf(withTelemetry(base, "http://127.0.0.1:4318"), "stdio"), [
      "127.0.0.1:4318",
    ]);
    assert.deepEqual(netOf(withTelemetry(http, "http://127.0.0.1:4318"), "http"), [
      "127.0.0.1:8443",
      "127.0.0.1:4318",
    ]);
    // Deno compares host:port as text: the default port is written out.
    assert.deepEqual(netOf(withTelemetry(base, "https://otel.example.com/base"), "stdio"), [
      "otel.example.com:443",
    ]);
    const result = permissionSetFor(withTelemetry(base, "http://[::1]:4318"), {
      transport: "stdio",
      launcherPaths: [],
    });
    assert.ok(result.ok);
    assert.deepEqual(result.set.net, [{
      value: "[::1]:4318",
      reason: "[telemetry] otlp_endpoint: the OTLP/HTTP collector",
    }]);
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
});

async function htmcp(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", LAUNCH, ...args],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("htmcp permissions and htmcp check show the collector's net grant only when configured", async () => {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "htmcp-perm-otel-cli-" }));
  try {
    await Deno.mkdir(`${dir}/jail`);
    await prepareJail(`${dir}/jail`);
    const base = `jail_root = "jail"\naudit_log = "audit.jsonl"\n[allowlist]\ncommands = ["ls"]\n`;
    const off = `${dir}/off.toml`;
    const on = `${dir}/on.toml`;
    await Deno.writeTextFile(off, base);
    await Deno.writeTextFile(on, `${base}[telemetry]\notlp_endpoint = "http://127.0.0.1:4318"\n`);

    const json = async (policy: string) => {
      const result = await htmcp(["permissions", "--policy", policy, "--format", "json"]);
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout) as { transport: string; net: { value: string }[] };
    };
    const withOut = await json(off);
    assert.equal(withOut.transport, "stdio");
    assert.deepEqual(withOut.net, []);
    const withIt = await json(on);
    assert.deepEqual(withIt.net.map((grant) => grant.value), ["127.0.0.1:4318"]);

    const flags = await htmcp(["permissions", "--policy", on]);
    assert.equal(flags.code, 0, flags.stderr);
    assert.match(flags.stdout, /--allow-net=127\.0\.0\.1:4318/);
    const noFlags = await htmcp(["permissions", "--policy", off]);
    assert.doesNotMatch(noFlags.stdout, /--allow-net/);
    assert.match(noFlags.stdout, /--deny-net/);

    const checked = await htmcp(["check", "--policy", on]);
    assert.equal(checked.code, 0, checked.stdout + checked.stderr);
    assert.match(checked.stdout, /^ {2}net: {3}127\.0\.0\.1:4318/m);
    const unchecked = await htmcp(["check", "--policy", off]);
    assert.equal(unchecked.code, 0, unchecked.stdout + unchecked.stderr);
    assert.doesNotMatch(unchecked.stdout, /4318/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
