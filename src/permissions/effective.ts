/**
 * Compares the permissions in force with a `PermissionSet`, through
 * `Deno.permissions.query` (no prompt, no side effect).
 *
 * Deno cannot list its grants, so "nothing broader" is established by
 * probing: every kind unscoped, every ancestor folder of every granted path,
 * the default remote-import hosts, and sentinels a real mistake would grant
 * (`/etc/shadow`, `/bin/sh`, `LD_PRELOAD`, another port). A hand-written
 * `--allow-read=/some/unrelated/path` would pass these probes unnoticed: the
 * check is best-effort against mistakes, exact against the generated set.
 *
 * @module
 */
import { DEFAULT_IMPORT_HOSTS } from "./render_flags.ts";
import { cleanPath, isInside, parentOf } from "./_paths.ts";
import type { PermissionSet } from "./types.ts";

/** What the comparison found. */
export interface PermissionComparison {
  /** Descriptors granted although the set does not grant them (the layer is not in force). */
  readonly broader: readonly string[];
  /** Grants of the set that are not in force (the server will hit `NotCapable`). */
  readonly missing: readonly string[];
}

const SENTINEL_PATHS = [
  "/",
  "/etc/shadow",
  "/etc/passwd",
  "/root",
  "/home",
  "/tmp",
  "/proc/self/environ",
];
const SENTINEL_PROGRAMS = ["/bin/sh", "/usr/bin/sh", "/usr/bin/env", "/usr/bin/id", "sh", "bash"];
const SENTINEL_ENV = ["LD_PRELOAD", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "HOME", "PATH"];
const SENTINEL_NET = ["127.0.0.1:22", "0.0.0.0:80", "localhost:80", "example.com:443"];

function granted(descriptor: Deno.PermissionDescriptor): boolean {
  return Deno.permissions.querySync(descriptor).state === "granted";
}

function label(descriptor: Deno.PermissionDescriptor): string {
  const { name, ...scope } = descriptor as { name: string } & Record<string, unknown>;
  const value = Object.values(scope)[0];
  return value === undefined ? `${name} (unscoped)` : `${name} ${String(value)}`;
}

/** Every proper ancestor of `path`, up to and including `/`. */
function ancestors(path: string): string[] {
  const found: string[] = [];
  let current = cleanPath(path);
  while (current !== "/") {
    current = parentOf(current);
    found.push(current);
  }
  return found;
}

/**
 * Compares the permissions in force with `set`, for `htmcp check` and the
 * startup line: a process started with broader grants is not confined.
 *
 * @param set The permission set the process should run under.
 * @returns What is broader than the set and what the set grants that is missing.
 * @example
 * ```ts
 * import { comparePermissions, type PermissionSet } from "./mod.ts";
 * declare const set: PermissionSet;
 * const { broader } = comparePermissions(set);
 * if (broader.length > 0) console.error(`not confined: ${broader.join(", ")}`);
 * ```
 */
export function comparePermissions(set: PermissionSet): PermissionComparison {
  const values = (kind: "read" | "write" | "run" | "net" | "env") => set[kind].map((g) => g.value);
  const read = values("read");
  const write = values("write");
  const run = new Set(values("run"));
  const net = new Set(values("net"));
  const env = new Set(values("env"));
  const coveredBy = (paths: readonly string[], path: string) =>
    paths.some((p) => isInside(p, path));

  const shouldBeRefused: Deno.PermissionDescriptor[] = [];
  for (const name of ["read", "write", "run", "net", "env", "sys", "ffi", "import"] as const) {
    shouldBeRefused.push({ name } as Deno.PermissionDescriptor);
  }
  const readProbes = new Set([...read.flatMap(ancestors), ...SENTINEL_PATHS]);
  for (const path of readProbes) {
    if (!coveredBy(read, path)) shouldBeRefused.push({ name: "read", path });
  }
  // Write: never on anything only readable (the jail, the policy, binaries).
  const writeProbes = new Set([...write.flatMap(ancestors), ...read, ...SENTINEL_PATHS]);
  for (const path of writeProbes) {
    if (!coveredBy(write, path)) shouldBeRefused.push({ name: "write", path });
  }
  // A bare sentinel name is resolved on PATH by Deno's query, so it is
  // legitimately granted when the set holds a binary of that name (an
  // allowlisted `sh`): probing it would report a false "broader".
  const runNames = new Set([...run].map((path) => path.slice(path.lastIndexOf("/") + 1)));
  for (const command of SENTINEL_PROGRAMS) {
    const bare = !command.includes("/");
    if (run.has(command) || (bare && runNames.has(command))) continue;
    shouldBeRefused.push({ name: "run", command });
  }
  for (const variable of SENTINEL_ENV) {
    if (!env.has(variable)) shouldBeRefused.push({ name: "env", variable });
  }
  // Deno's query refuses a wildcard host (`*.example.com:443`, the egress
  // allowlist's form) although its flag accepts one: probe a name below it.
  const concrete = (host: string) => host.startsWith("*.") ? `htmcp-probe.${host.slice(2)}` : host;
  const otherPorts = [...net].map((host) => concrete(host).replace(/:\d+$/, ":1"));
  // Deno's `*.NAME:PORT` also grants NAME:PORT itself, so a sentinel such a
  // grant covers is legitimately granted (as a sentinel program the set names is).
  const wildcards = [...net].filter((host) => host.startsWith("*."));
  const coveredByWildcard = (host: string) =>
    wildcards.some((grant) => {
      const suffix = grant.slice(2);
      return host === suffix || host.endsWith(`.${suffix}`);
    });
  for (const host of [...SENTINEL_NET, ...otherPorts]) {
    if (!net.has(host) && !coveredByWildcard(host)) shouldBeRefused.push({ name: "net", host });
  }
  for (const host of DEFAULT_IMPORT_HOSTS) shouldBeRefused.push({ name: "import", host });

  // Deno 2.9 reports an unscoped `import` query as granted under
  // `--cached-only`, whatever --deny-import says; what matters is that every
  // host Deno would import from by default is denied, so that case counts
  // as refused when all of them are.
  const defaultHostsDenied = DEFAULT_IMPORT_HOSTS.every((host) =>
    !granted({ name: "import", host })
  );
  const isBroader = (descriptor: Deno.PermissionDescriptor) =>
    granted(descriptor) &&
    !(descriptor.name === "import" && descriptor.host === undefined && defaultHostsDenied);
  const broader = shouldBeRefused.filter(isBroader).map(label);

  const missing: string[] = [];
  const expect = (descriptor: Deno.PermissionDescriptor) => {
    if (!granted(descriptor)) missing.push(label(descriptor));
  };
  for (const path of read) expect({ name: "read", path });
  for (const path of write) expect({ name: "write", path });
  for (const command of run) expect({ name: "run", command });
  for (const host of net) expect({ name: "net", host: concrete(host) });
  for (const variable of env) expect({ name: "env", variable });
  return { broader: [...new Set(broader)], missing };
}
