import assert, { deepStrictEqual, equal, equal as assertEquals } from "node:assert/strict";
import { makePolicy } from "../_helpers/policy.ts";
import type { Policy } from "../../src/config/types.ts";
import { type PermissionSet, permissionSetFor } from "../../src/permissions/mod.ts";

const values = (grants: readonly { value: string }[]) => grants.map((grant) => grant.value);

async function withJail(fn: (jail: string) => void | Promise<void>): Promise<void> {
  const jail = await Deno.makeTempDir({ prefix: "htmcp-perm-" });
  try {
    await fn(Deno.realPathSync(jail));
  } finally {
    await Deno.remove(jail, { recursive: true });
  }
}

function policyWith(jail: string, overrides: Partial<Policy> = {}): Policy {
  return makePolicy({
    jailRoot: jail,
    allow: ["ls", "cat"],
    auditLog: "/var/log/htmcp/audit.jsonl",
    overrides: { policyFile: "/etc/htmcp/policy.toml", stateDir: "/var/lib/htmcp", ...overrides },
  });
}

function setOf(policy: Policy, options: Parameters<typeof permissionSetFor>[1]): PermissionSet {
  const result = permissionSetFor(policy, options);
  if (!result.ok) throw new Error(`expected a set, got ${result.code}: ${result.reason}`);
  return result.set;
}

Deno.test("permissionSetFor() grants run on exactly the resolved allowlist paths and launchers", async () => {
  await withJail((jail) => {
    const policy = policyWith(jail);
    const set = setOf(policy, { transport: "stdio", launcherPaths: ["/usr/bin/bwrap"] });
    const expected = [...policy.allowlist.values()].map((command) => command.path);
    deepStrictEqual(values(set.run), [...expected, "/usr/bin/bwrap"]);
    for (const grant of set.run) assert(grant.reason.length > 0, "every run grant is justified");
  });
});

Deno.test("permissionSetFor() reads the jail, policy, audit log, state dir and binaries, nothing else on stdio", async () => {
  await withJail((jail) => {
    const policy = policyWith(jail);
    const set = setOf(policy, { transport: "stdio", launcherPaths: [] });
    deepStrictEqual(values(set.read), [
      jail,
      "/etc/htmcp/policy.toml",
      "/var/log/htmcp/audit.jsonl",
      "/var/log/htmcp",
      "/var/lib/htmcp",
      ...[...policy.allowlist.values()].map((command) => command.path),
    ]);
  });
});

Deno.test("permissionSetFor() writes only the audit log file and the state dir, never the jail", async () => {
  await withJail((jail) => {
    const set = setOf(policyWith(jail), { transport: "stdio", launcherPaths: [] });
    deepStrictEqual(values(set.write), ["/var/log/htmcp/audit.jsonl", "/var/lib/htmcp"]);
    assert(!values(set.write).includes(jail));
    assert(values(set.denyWrite).includes(jail), "the jail is denied for writing explicitly");
    assert(values(set.denyWrite).includes("/etc/htmcp/policy.toml"));
  });
});

Deno.test("permissionSetFor() grants no net on stdio and exactly the listen host:port on HTTP", async () => {
  await withJail((jail) => {
    const policy = policyWith(jail, {
      http: {
        ...makePolicy({ jailRoot: jail }).http,
        listen: "127.0.0.1:8443",
        tlsCert: "/etc/htmcp/cert.pem",
        tlsKey: "/etc/htmcp/key.pem",
      },
    });
    deepStrictEqual(setOf(policy, { transport: "stdio", launcherPaths: [] }).net, []);
    const http = setOf(policy, { transport: "http", launcherPaths: [] });
    deepStrictEqual(values(http.net), ["127.0.0.1:8443"]);
    assert(values(http.read).includes("/etc/htmcp/cert.pem"));
    assert(values(http.read).includes("/etc/htmcp/key.pem"));
    const stdio = setOf(policy, { transport: "stdio", launcherPaths: [] });
    assert(!values(stdio.read).includes("/etc/htmcp/key.pem"), "stdio never reads the TLS key");
    const overridden = setOf(policy, {
      transport: "http",
      launcherPaths: [],
      listen: "localhost:9000",
    });
    deepStrictEqual(values(overridden.net), ["localhost:9000"]);
  });
});

Deno.test("permissionSetFor() refuses HTTP without a usable listen address", async () => {
  await withJail((jail) => {
    const policy = policyWith(jail);
    const none = permissionSetFor(policy, { transport: "http", launcherPaths: [] });
    assertEquals(none.ok ? "ok" : none.code, "BAD_LISTEN_ADDRESS");
    for (const listen of ["127.0.0.1", "127.0.0.1:99999", ":80", "a b:1", "127.0.0.1:80,evil:1"]) {
      const bad = permissionSetFor(policy, { transport: "http", launcherPaths: [], listen });
      assertEquals(bad.ok ? "ok" : bad.code, "BAD_LISTEN_ADDRESS", listen);
    }
    const v6 = setOf(policy, { transport: "http", launcherPaths: [], listen: "[::1]:8080" });
    deepStrictEqual(values(v6.net), ["[::1]:8080"]);
  });
});

Deno.test("permissionSetFor() grants env on the HTMCP_* names and [env] pass names only", async () => {
  await withJail((jail) => {
    const set = setOf(policyWith(jail, { envPass: ["PATH", "LANG"] }), {
      transport: "stdio",
      launcherPaths: [],
    });
    const env = values(set.env);
    assert(env.includes("HTMCP_POLICY_FILE"));
    assert(env.includes("PATH") && env.includes("LANG"));
    assert(!env.includes("HOME"));
    assert(env.every((name) => name.startsWith("HTMCP_") || name === "PATH" || name === "LANG"));
  });
});

Deno.test("permissionSetFor() refuses write on, inside or around the jail root", async () => {
  await withJail((jail) => {
    for (const stateDir of [jail, `${jail}/state`, jail.slice(0, jail.lastIndexOf("/"))]) {
      const result = permissionSetFor(policyWith(jail, { stateDir }), {
        transport: "stdio",
        launcherPaths: [],
      });
      assertEquals(result.ok ? "ok" : result.code, "UNSAFE_WRITE_GRANT", stateDir);
      assert(!result.ok && result.reason.includes("jail root"), stateDir);
    }
    // /jail-evil is a sibling, not inside: allowed.
    const sibling = permissionSetFor(policyWith(jail, { stateDir: `${jail}-evil` }), {
      transport: "stdio",
      launcherPaths: [],
    });
    assert(sibling.ok, "a sibling whose name merely starts with the jail's is not inside it");
  });
});

Deno.test("permissionSetFor() refuses write on a folder holding an allowlisted binary, a launcher or a child PATH folder", async () => {
  await withJail((jail) => {
    const cases: [Partial<Policy>, string[], string][] = [
      [{ auditLog: "/usr/bin/audit.log" }, [], "/usr/bin"],
      [{ stateDir: "/usr" }, [], "/usr/bin"],
      [{ stateDir: "/" }, [], "/"],
      [{ stateDir: "/usr/local/bin" }, [], "child PATH"],
      [{ stateDir: "/opt/tools" }, ["/opt/tools/bwrap"], "/opt/tools/bwrap"],
    ];
    for (const [overrides, launcherPaths, mention] of cases) {
      const result = permissionSetFor(policyWith(jail, overrides), {
        transport: "stdio",
        launcherPaths,
      });
      assertEquals(result.ok ? "ok" : result.code, "UNSAFE_WRITE_GRANT", JSON.stringify(overrides));
      assert(
        !result.ok && result.reason.includes(mention),
        `${result.ok ? "" : result.reason} names ${mention}`,
      );
    }
  });
});

Deno.test("permissionSetFor() refuses an audit log directly in / (read on its folder would be read on everything)", async () => {
  await withJail((jail) => {
    const result = permissionSetFor(policyWith(jail, { auditLog: "/audit.jsonl" }), {
      transport: "stdio",
      launcherPaths: [],
    });
    equal(result.ok ? "ok" : result.code, "UNSAFE_READ_GRANT");
  });
});

Deno.test("permissionSetFor() refuses a state dir that holds the policy file", async () => {
  await withJail((jail) => {
    const result = permissionSetFor(policyWith(jail, { stateDir: "/etc/htmcp" }), {
      transport: "stdio",
      launcherPaths: [],
    });
    assertEquals(result.ok ? "ok" : result.code, "UNSAFE_WRITE_GRANT");
    assert(!result.ok && result.reason.includes("policy"));
  });
});

Deno.test("permissionSetFor() refuses values Deno flags cannot express", async () => {
  await withJail((jail) => {
    const result = permissionSetFor(policyWith(jail, { stateDir: "/var/lib/a,b" }), {
      transport: "stdio",
      launcherPaths: [],
    });
    assertEquals(result.ok ? "ok" : result.code, "NOT_REPRESENTABLE");
    const relative = permissionSetFor(policyWith(jail), {
      transport: "stdio",
      launcherPaths: ["bwrap"],
    });
    assertEquals(relative.ok ? "ok" : relative.code, "NOT_ABSOLUTE");
  });
});

Deno.test("permissionSetFor() is pure: the same policy gives the same set, frozen", async () => {
  await withJail((jail) => {
    const policy = policyWith(jail);
    const a = setOf(policy, { transport: "stdio", launcherPaths: [] });
    const b = setOf(policy, { transport: "stdio", launcherPaths: [] });
    deepStrictEqual(a, b);
    assert(Object.isFrozen(a) && Object.isFrozen(a.run));
  });
});

Deno.test("permissionSetFor() reads the always-allow file and refuses any write grant over it", async () => {
  await withJail((jail) => {
    const approval = {
      ttlMs: 60_000,
      waitMs: 0,
      require: "operator" as const,
      alwaysAllowFile: "/etc/htmcp/always_allow.toml",
      alwaysAllow: [],
      alwaysAllowSha256: null,
    };
    const set = setOf(policyWith(jail, { approval }), { transport: "stdio", launcherPaths: [] });
    assert(values(set.read).includes("/etc/htmcp/always_allow.toml"));
    assert(!values(set.write).some((path) => "/etc/htmcp/always_allow.toml".startsWith(path)));
    const result = permissionSetFor(
      policyWith(jail, {
        approval: { ...approval, alwaysAllowFile: "/var/lib/htmcp/always.toml" },
        policyFile: "/etc/htmcp/policy.toml",
      }),
      { transport: "stdio", launcherPaths: [] },
    );
    assertEquals(result.ok ? "ok" : result.code, "UNSAFE_WRITE_GRANT");
    assert(!result.ok && result.reason.includes("always-allow file"));
  });
});
