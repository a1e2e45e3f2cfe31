import assert, { equal } from "node:assert/strict";
import { makePolicy } from "../_helpers/policy.ts";
import type { Policy } from "../../src/config/types.ts";
import { permissionSetFor, renderDenoFlags, renderSystemdUnit } from "../../src/permissions/mod.ts";

// Any existing folder outside /tmp and /home (those change the unit on purpose); never written.
const JAIL = Deno.realPathSync("/usr/share");

function policyFor(overrides: Partial<Policy>): Policy {
  return makePolicy({
    jailRoot: JAIL,
    allow: ["ls", "cat"],
    auditLog: "/var/log/htmcp/audit.jsonl",
    overrides: { policyFile: "/etc/htmcp/policy.toml", stateDir: "/var/lib/htmcp", ...overrides },
  });
}

function httpSet(policy: Policy) {
  const result = permissionSetFor(policy, {
    transport: "http",
    launcherPaths: ["/usr/bin/setpriv"],
    listen: "127.0.0.1:8080",
  });
  if (!result.ok) throw new Error(result.reason);
  return result.set;
}

function unitFor(policy: Policy, user = false): string {
  return renderSystemdUnit(httpSet(policy), policy, {
    program: {
      kind: "deno",
      denoPath: Deno.execPath(),
      module: "/opt/htmcp/htmcp.js",
      denoDir: null,
    },
    user,
    listen: "127.0.0.1:8080",
    environmentFile: policy.auth.mode === "oauth" ? "/etc/htmcp/htmcp.env" : null,
  });
}

/** A strict parser: every line is blank, a comment, a [Section] or Key=Value. */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | null = null;
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const section = /^\[(Unit|Service|Install)\]$/.exec(line);
    if (section) {
      current = new Map();
      sections.set(section[1]!, current);
      continue;
    }
    const pair = /^([A-Z][A-Za-z]+)=(.*)$/.exec(line);
    assert(pair !== null && current !== null, `unparseable unit line: ${line}`);
    current.set(pair[1]!, [...(current.get(pair[1]!) ?? []), pair[2]!]);
  }
  return sections;
}

const one = (unit: Map<string, Map<string, string[]>>, key: string) => {
  const values = unit.get("Service")?.get(key);
  assert(values !== undefined && values.length === 1, `${key} appears once`);
  return values[0]!;
};

Deno.test("renderSystemdUnit() carries the generated flags and every hardening setting of the issue", () => {
  const policy = policyFor({
    sandbox: {
      mode: "none",
      network: "none",
      networkAllow: [],
      acceptPathCheckOnly: true,
      user: null,
    },
  });
  const text = unitFor(policy);
  const unit = parseUnit(text);
  assert(
    one(unit, "ExecStart").includes(renderDenoFlags(httpSet(policy)).join(" ")),
    "exact flags, not -A",
  );
  assert(!one(unit, "ExecStart").includes("--allow-all"));
  const expected: Record<string, string> = {
    NoNewPrivileges: "yes",
    ProtectSystem: "strict",
    ReadWritePaths: `${JAIL} /var/log/htmcp /var/lib/htmcp`,
    ProtectHome: "yes",
    PrivateTmp: "yes",
    PrivateDevices: "yes",
    ProtectKernelTunables: "yes",
    ProtectKernelModules: "yes",
    ProtectKernelLogs: "yes",
    RestrictAddressFamilies: "AF_UNIX AF_INET AF_INET6",
    RestrictNamespaces: "user pid",
    LockPersonality: "yes",
    MemoryDenyWriteExecute: "no",
    SystemCallFilter: "@system-service",
    UMask: "0077",
    KillMode: "control-group",
  };
  for (const [key, value] of Object.entries(expected)) equal(one(unit, key), value, key);
  equal(unit.get("Install")?.get("WantedBy")?.[0], "multi-user.target");
});

Deno.test("renderSystemdUnit() serves HTTP on the given address with IP families and no PrivateNetwork", () => {
  const unit = parseUnit(unitFor(policyFor({})));
  equal(one(unit, "RestrictAddressFamilies"), "AF_UNIX AF_INET AF_INET6");
  equal(unit.get("Service")?.has("PrivateNetwork"), false);
  assert(one(unit, "ExecStart").includes("--allow-net=127.0.0.1:8080"));
  assert(
    one(unit, "ExecStart").endsWith(" serve --policy /etc/htmcp/policy.toml --http 127.0.0.1:8080"),
  );
});

Deno.test("renderSystemdUnit() refuses a stdio permission set: a service has no client on stdin", () => {
  const policy = policyFor({});
  const stdio = permissionSetFor(policy, {
    transport: "stdio",
    launcherPaths: ["/usr/bin/setpriv"],
  });
  assert(stdio.ok);
  assert.throws(
    () =>
      renderSystemdUnit(stdio.set, policy, {
        program: { kind: "binary", path: "/usr/local/bin/htmcp" },
        user: false,
        listen: "127.0.0.1:8080",
        environmentFile: null,
      }),
    TypeError,
  );
});

Deno.test("renderSystemdUnit() runs a system unit as a dedicated user and reads the PIN from an EnvironmentFile", () => {
  const oauth = policyFor({});
  equal(oauth.auth.mode, "oauth");
  const unit = parseUnit(unitFor(oauth));
  equal(one(unit, "User"), "htmcp");
  equal(one(unit, "Group"), "htmcp");
  equal(one(unit, "EnvironmentFile"), "/etc/htmcp/htmcp.env");
  assert(!one(unit, "ExecStart").includes("HTMCP_OAUTH_ADMIN_PIN="));
  equal(unit.get("Service")?.has("Environment") ?? false, false);
  // No PIN needed, no file: a missing EnvironmentFile would stop the start.
  const open = parseUnit(unitFor(policyFor({ auth: { ...oauth.auth, mode: "none" } })));
  equal(open.get("Service")?.has("EnvironmentFile"), false);
  // A --user unit runs as its manager's user; its default file keeps the %h specifier.
  const user = renderSystemdUnit(httpSet(oauth), oauth, {
    program: { kind: "binary", path: "/usr/local/bin/htmcp" },
    user: true,
    listen: "127.0.0.1:8080",
    environmentFile: "%h/.config/htmcp/htmcp.env",
  });
  equal(parseUnit(user).get("Service")?.has("User"), false);
  equal(one(parseUnit(user), "EnvironmentFile"), "%h/.config/htmcp/htmcp.env");
  // Any other path is literal: % escaped; a blank or quote is refused, never mis-written.
  const literal = (environmentFile: string) =>
    renderSystemdUnit(httpSet(oauth), oauth, {
      program: { kind: "binary", path: "/usr/local/bin/htmcp" },
      user: false,
      listen: "127.0.0.1:8080",
      environmentFile,
    });
  equal(one(parseUnit(literal("/etc/htmcp/100%.env")), "EnvironmentFile"), "/etc/htmcp/100%%.env");
  for (const bad of ["/etc/htmcp/my pin.env", '/etc/"x".env', "relative.env"]) {
    assert.throws(() => literal(bad), RangeError, bad);
  }
});

Deno.test("renderSystemdUnit() lets the bwrap sandbox create namespaces and mount, and nothing else changes", () => {
  const unit = parseUnit(
    unitFor(
      policyFor({
        sandbox: {
          mode: "bwrap",
          network: "none",
          networkAllow: [],
          acceptPathCheckOnly: false,
          user: null,
        },
      }),
    ),
  );
  equal(unit.get("Service")?.has("RestrictNamespaces"), false);
  equal(one(unit, "SystemCallFilter"), "@system-service @mount");
  equal(one(unit, "NoNewPrivileges"), "yes");
});

Deno.test("renderSystemdUnit() keeps a jail under /home visible with ProtectHome=tmpfs and BindPaths", () => {
  const policy = makePolicy({
    jailRoot: JAIL,
    auditLog: "/var/log/htmcp/audit.jsonl",
    overrides: { jailRoot: "/home/dev/project", policyFile: "/etc/htmcp/policy.toml" },
  });
  const unit = parseUnit(unitFor(policy, true));
  equal(one(unit, "ProtectHome"), "tmpfs");
  equal(one(unit, "BindPaths"), "/home/dev/project");
  equal(one(unit, "PrivateUsers"), "yes");
  equal(unit.get("Install")?.get("WantedBy")?.[0], "default.target");
});

const analyze = await (async () => {
  try {
    return (await new Deno.Command("systemd-analyze", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).output()).success;
  } catch {
    return false;
  }
})();

Deno.test({
  name:
    "systemd-analyze verify accepts the unit, and security --offline rates it OK (exposure at most 5.0)",
  ignore: !analyze,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "htmcp-unit-" });
    try {
      const file = `${dir}/htmcp.service`;
      await Deno.writeTextFile(file, unitFor(policyFor({})));
      const verify = await new Deno.Command("systemd-analyze", {
        args: ["verify", "--man=no", file],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const complaints = new TextDecoder().decode(verify.stderr);
      equal(verify.code, 0, complaints);
      assert.doesNotMatch(complaints, /htmcp\.service/, complaints);
      const security = await new Deno.Command("systemd-analyze", {
        args: ["security", "--offline=true", "--no-pager", file],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(security.stdout);
      const score = /Overall exposure level for htmcp\.service: ([\d.]+)/.exec(text);
      assert(score !== null, text);
      assert(Number(score[1]) <= 5.0, `exposure ${score[1]}`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
