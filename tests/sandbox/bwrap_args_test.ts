import assert from "node:assert/strict";
import {
  buildBwrapArgs,
  detectHostLayout,
  DEV_NODES,
  ETC_COPIES,
  ETC_FOLDERS,
  FIRST_COPY_FD,
  isUsrTarget,
  jailRootRefusal,
  layoutFromLinks,
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

Deno.test("buildBwrapArgs() unshares every namespace, adds no reaper of bwrap's own and drops all capabilities", () => {
  const a = args();
  for (
    const flag of [
      "--unshare-user",
      "--unshare-pid",
      "--as-pid-1",
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
  assert.ok(![...ETC_COPIES, ...ETC_FOLDERS].some((f) => /shadow|sudoers|ssh/.test(f)));
  assert.ok(!a.includes("/root") && !a.includes("/home"));
});

Deno.test("buildBwrapArgs() copies the /etc files in from consecutive descriptors, read-only", () => {
  const a = args();
  // `--perms 0444 --file FD DEST`: FD is where the namespace's init opened
  // ETC_COPIES[i] (launcher.ts passes them as --copy-in, in this order).
  const copies = operands(a, "--file", 2);
  assert.deepEqual(copies, ETC_COPIES.map((file, i) => [String(FIRST_COPY_FD + i), file]));
  for (const file of ETC_COPIES) {
    const at = a.indexOf(file);
    assert.deepEqual(a.slice(at - 4, at - 2), ["--perms", "0444"]);
  }
  // Copied, never bound: no mount per file.
  const bound = operands(a, "--ro-bind-try", 2).map(([src]) => src);
  assert.ok(!ETC_COPIES.some((file) => bound.includes(file)));
  assert.ok(ETC_FOLDERS.every((folder) => bound.includes(folder)));
});

Deno.test("buildBwrapArgs() makes the sandbox's root read-only after its last operation that writes there", () => {
  const a = args();
  assert.deepEqual(operands(a, "--remount-ro", 1), [["/"]]);
  const remount = a.indexOf("--remount-ro");
  for (
    const op of ["--file", "--ro-bind", "--ro-bind-try", "--symlink", "--dir", "--bind", "--tmpfs"]
  ) {
    assert.ok(a.lastIndexOf(op) < remount, op);
  }
});

Deno.test("buildBwrapArgs() gives a /dev of plain device nodes: no tty, no devpts", () => {
  const a = args();
  assert.ok(!a.includes("--dev"));
  assert.deepEqual(operands(a, "--dev-bind", 2), DEV_NODES.map((node) => [node, node]));
  assert.ok(!a.includes("/dev/tty") && !a.includes("/dev/pts"));
  assert.ok(a.indexOf("--tmpfs") < a.indexOf("--dev-bind"));
});

Deno.test("buildBwrapArgs() binds only the jail read-write, at its own path, after the private /tmp", () => {
  const a = args();
  assert.deepEqual(operands(a, "--bind", 2), [[jail, jail]]);
  assert.deepEqual(operands(a, "--tmpfs", 1), [["/dev"], ["/tmp"]]);
  assert.ok(a.lastIndexOf("--tmpfs") < a.indexOf("--bind"));
  assert.deepEqual(operands(a, "--proc", 1), [["/proc"]]);
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
  const links = operands(a, "--symlink", 2).filter(([, link]) => !link?.startsWith("/dev/"));
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

Deno.test("layoutFromLinks() keeps only system folders that link into /usr", () => {
  const layout = layoutFromLinks(
    new Map([
      ["/bin", "usr/bin"],
      ["/lib", "../etc"],
      ["/lib64", "/usr/lib64"],
      ["/opt", "usr/opt"],
    ]),
  );
  assert.deepEqual([...layout.usrSymlinks], [["/bin", "usr/bin"], ["/lib64", "/usr/lib64"]]);
});

Deno.test("detectHostLayout() reads this host's merged-/usr symlinks", () => {
  const layout = detectHostLayout();
  if (Deno.lstatSync("/bin").isSymlink) assert.ok(layout.usrSymlinks.has("/bin"));
  for (const [dir, target] of layout.usrSymlinks) {
    assert.equal(Deno.readLinkSync(dir), target);
    assert.ok(isUsrTarget(target));
  }
});
