import assert from "node:assert/strict";
import {
  buildBwrapArgs,
  detectHostLayout,
  ETC_FILES,
  isUsrTarget,
  jailRootRefusal,
} from "../../src/sandbox/mod.ts";
import { makePolicy } from "../_helpers/policy.ts";

const dir = Deno.makeTempDirSync();
const base = makePolicy({ jailRoot: dir });
Deno.removeSync(dir);
const jail = base.jailRoot;

function args(network: "none" | "allowlist" | "host" = "none"): string[] {
  const policy = {
    ...base,
    sandbox: {
      mode: "bwrap" as const,
      network,
      networkAllow: [],
      acceptPathCheckOnly: false,
      user: null,
    },
  };
  return buildBwrapArgs(policy, { cwd: `${jail}/sub` });
}

/** The pairs/triples of an option, e.g. all `--ro-bind SRC DEST`. */
function operands(list: string[], flag: string, arity: number): string[][] {
  const out: string[][] = [];
  list.forEach((a, i) => {
    if (a === flag) out.push(list.slice(i + 1, i + 1 + arity));
  });
  return out;
}

Deno.test("buildBwrapArgs() unshares every namespace and drops all capabilities", () => {
  const a = args();
  for (
    const flag of [
      "--unshare-user",
      "--unshare-pid",
      "--unshare-ipc",
      "--unshare-uts",
      "--unshare-cgroup",
      "--unshare-net",
      "--die-with-parent",
      "--new-session",
    ]
  ) assert.ok(a.includes(flag), flag);
  assert.deepEqual(operands(a, "--cap-drop", 1), [["ALL"]]);
  // Without a run-as identity bwrap keeps the caller's uid (a non-root server's own).
  assert.deepEqual(operands(a, "--uid", 1), []);
});

Deno.test("buildBwrapArgs() maps the run-as identity to itself and refuses uid or gid 0", () => {
  const policy = { ...base, sandbox: { ...base.sandbox, mode: "bwrap" as const } };
  const a = buildBwrapArgs(policy, { cwd: jail, runAs: { uid: 1234, gid: 1235 } });
  assert.deepEqual(operands(a, "--uid", 1), [["1234"]]);
  assert.deepEqual(operands(a, "--gid", 1), [["1235"]]);
  assert.throws(() => buildBwrapArgs(policy, { cwd: jail, runAs: { uid: 0, gid: 1 } }), RangeError);
  assert.throws(() => buildBwrapArgs(policy, { cwd: jail, runAs: { uid: 1, gid: 0 } }), RangeError);
});

Deno.test('buildBwrapArgs() keeps the host network only when [sandbox] network = "host"', () => {
  assert.ok(args("none").includes("--unshare-net"));
  // The allowlist's only route is the proxy socket: the namespace stays empty.
  assert.ok(args("allowlist").includes("--unshare-net"));
  assert.ok(!args("host").includes("--unshare-net"));
});

Deno.test("buildBwrapArgs() binds system folders read-only and never /root, /home or /etc/shadow", () => {
  const a = args();
  const ro = [...operands(a, "--ro-bind", 2), ...operands(a, "--ro-bind-try", 2)];
  const sources = ro.map(([src]) => src);
  assert.ok(sources.includes("/usr"));
  for (const secret of ["/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/root", "/home", "/etc"]) {
    assert.ok(!sources.includes(secret), secret);
  }
  assert.ok(!ETC_FILES.some((f) => /shadow|sudoers|ssh/.test(f)));
  assert.ok(!a.includes("/root") && !a.includes("/home"));
});

Deno.test("buildBwrapArgs() binds only the jail read-write, at its own path, after the private /tmp", () => {
  const a = args();
  assert.deepEqual(operands(a, "--bind", 2), [[jail, jail]]);
  assert.ok(a.indexOf("--bind") > a.indexOf("--tmpfs"));
  assert.deepEqual(operands(a, "--tmpfs", 1), [["/tmp"]]);
  assert.deepEqual(operands(a, "--proc", 1), [["/proc"]]);
  assert.deepEqual(operands(a, "--dev", 1), [["/dev"]]);
  assert.deepEqual(operands(a, "--chdir", 1), [[`${jail}/sub`]]);
});

Deno.test("buildBwrapArgs() never carries environment values on argv", () => {
  const a = args();
  assert.ok(!a.includes("--setenv"));
});

Deno.test("buildBwrapArgs() refuses a jail root that is / or contains a system folder", () => {
  const policy = { ...base, jailRoot: "/" };
  assert.throws(() => buildBwrapArgs(policy, { cwd: "/" }), RangeError);
  assert.match(jailRootRefusal("/") ?? "", /cannot be sandboxed/);
  assert.match(jailRootRefusal("/usr") ?? "", /"\/usr"/);
  assert.match(jailRootRefusal("/tmp") ?? "", /"\/tmp"/);
  assert.equal(jailRootRefusal("/tmp/jail"), null);
  assert.equal(jailRootRefusal("/srv/project"), null);
});

Deno.test("buildBwrapArgs() recreates merged-/usr folders as symlinks, binding the rest", () => {
  const layout = {
    usrSymlinks: new Map([["/bin", "usr/bin"], ["/lib64", "/usr/lib64"], ["/lib", "../etc"]]),
  };
  const a = buildBwrapArgs(base, { cwd: jail }, layout);
  const links = operands(a, "--symlink", 2);
  assert.deepEqual(links, [["usr/bin", "/bin"], ["/usr/lib64", "/lib64"]]);
  // A target outside /usr is never trusted: that folder is bound read-only instead.
  assert.ok(operands(a, "--ro-bind-try", 2).some(([src]) => src === "/lib"));
});

Deno.test("isUsrTarget() accepts only targets inside /usr", () => {
  assert.equal(isUsrTarget("usr/bin"), true);
  assert.equal(isUsrTarget("/usr/lib64"), true);
  assert.equal(isUsrTarget("usr/../etc"), false);
  assert.equal(isUsrTarget("/etc"), false);
  assert.equal(isUsrTarget("usr"), false);
});

Deno.test("detectHostLayout() reads this host's merged-/usr symlinks", () => {
  const layout = detectHostLayout();
  if (Deno.lstatSync("/bin").isSymlink) assert.ok(layout.usrSymlinks.has("/bin"));
  for (const [dir, target] of layout.usrSymlinks) {
    assert.equal(Deno.readLinkSync(dir), target);
    assert.ok(isUsrTarget(target));
  }
});
