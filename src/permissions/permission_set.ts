/**
 * `permissionSetFor`: the one pure function from a loaded policy to the Deno
 * permission set the server runs under. Every renderer (flags, JSON, systemd,
 * Worker) starts from its result, so the layers cannot drift apart.
 *
 * The set is the second layer: even a bug in our policy engine, jail check
 * or audit writer cannot spawn, read, write, listen or read an env var the
 * policy never named. It refuses (a value, not a throw) to grant write where
 * that would undo the layer:
 *
 * - on or around the jail root: Deno checks the requested path text, and a
 *   symlink inside an allowed folder is followed without a check, so write on
 *   the jail would be write on whatever the model links to;
 * - on or around a folder that holds a program we run, or a child PATH
 *   folder: with write (and read) on such a folder the process can move the
 *   folder aside and put a new one in its place, and the run grant for
 *   `/folder/tool` then runs the replacement (verified on Deno 2.9.6:
 *   `tests/permissions/sharp_edges_test.ts`);
 * - on or around the policy file: no tool may change the policy.
 *
 * @module
 */
import type { Policy } from "../config/types.ts";
import { otlpNetGrant } from "../config/mod.ts";
import { HTMCP_ENV_NAMES } from "./env_names.ts";
import { denoNetGrant } from "../egress/rules.ts";
import { egressSocketDir, egressSocketPaths } from "../egress/socket_dir.ts";
import { cleanPath, isAbsolutePath, overlaps, parentOf } from "./_paths.ts";
import type {
  Grant,
  PermissionOptions,
  PermissionSet,
  PermissionSetErrorCode,
  PermissionSetResult,
} from "./types.ts";

/** Why the server runs each known helper; the executor decides which it needs. */
const LAUNCHER_REASONS: ReadonlyMap<string, string> = new Map([
  [
    "htmcp-spawn",
    "the launcher helper built from this repository: every command starts inside its PID namespace",
  ],
  [
    "bwrap",
    "the kernel sandbox launcher ([sandbox] mode): every command starts inside it",
  ],
  [
    "kill",
    "signals a command's whole process group: Deno.kill(-pgid) needs unscoped run, a scoped helper does not",
  ],
]);

/**
 * Builds the permission set for `policy` on `options.transport`.
 *
 * @param policy The loaded, frozen policy (paths already absolute).
 * @param options The transport, the executor's launcher paths, an optional listen override.
 * @returns The set, or a refusal naming the path that would undo the layer.
 * @example
 * ```ts
 * import { permissionSetFor, renderDenoFlags } from "./mod.ts";
 * import type { Policy } from "../config/types.ts";
 * declare const policy: Policy;
 * const result = permissionSetFor(policy, { transport: "stdio", launcherPaths: [] });
 * if (result.ok) console.log(renderDenoFlags(result.set).join(" "));
 * ```
 */
export function permissionSetFor(
  policy: Policy,
  options: PermissionOptions,
): PermissionSetResult {
  const read = new GrantList();
  const write = new GrantList();
  const run = new GrantList();
  const net = new GrantList();
  const env = new GrantList();
  const denyWrite = new GrantList();

  for (const path of options.launcherPaths) {
    if (!isAbsolutePath(path)) {
      return refuse("NOT_ABSOLUTE", `Cannot grant run on "${path}": it is not an absolute path.`);
    }
  }

  // read ------------------------------------------------------------------
  read.add(
    policy.jailRoot,
    "the jail root: cwd and argument paths are resolved (realpath) inside it",
  );
  const alwaysFile = policy.approval?.alwaysAllowFile ?? null;
  if (alwaysFile !== null) {
    read.add(alwaysFile, "the operator's always-allow rules, read once at startup");
  }
  if (policy.policyFile !== null) {
    read.add(policy.policyFile, "the policy file, read once at startup");
  }
  read.add(
    policy.auditLog,
    "the audit log: its last record is read on open to continue the hash chain",
  );
  const auditFolder = parentOf(policy.auditLog);
  if (auditFolder === "/") {
    return refuse(
      "UNSAFE_READ_GRANT",
      `Cannot grant read on the folder of the audit log "${policy.auditLog}": it is "/"; give the log a folder of its own (for example /var/log/htmcp/audit.jsonl).`,
    );
  }
  // Read only, never write: the writer fsyncs this folder after creating the
  // log (so the new entry survives a crash), and the loader resolves a log
  // that does not exist yet through it.
  read.add(auditFolder, "the audit log's folder: fsynced after the log is created");
  if (policy.stateDir !== null) {
    read.add(policy.stateDir, "the state dir (OAuth signing secret, approved clients)");
  }
  for (const command of policy.allowlist.values()) {
    // The loader stats each PATH candidate; a NotCapable stat counts as "not
    // here", so granting exactly the resolved path reproduces the resolution.
    read.add(command.path, `resolves allowlisted "${command.name}" at startup`);
  }
  for (const path of options.launcherPaths) {
    read.add(path, "the executor hashes its helper at startup before trusting it");
  }
  const shell = policy.fullControl?.shell;
  if (shell !== undefined) {
    read.add(shell.path, "resolves the shell of [mode] full_control at startup");
  }
  for (const path of options.launcherReads ?? []) {
    read.add(path, "the executor checks its helper against the build's manifest and source");
  }

  // run -------------------------------------------------------------------
  for (const command of policy.allowlist.values()) {
    // Grant and spawn by the same text: Deno does not resolve symlinks, so
    // /bin/ls is not /usr/bin/ls.
    run.add(command.path, `allowlisted "${command.name}"`);
  }
  if (shell !== undefined) {
    // Full-control text runs as `bash -c TEXT`; the run gate asks for this path.
    run.add(shell.path, "[mode] full_control: command text runs as bash -c TEXT in the sandbox");
  }
  for (const path of options.launcherPaths) {
    const name = path.slice(path.lastIndexOf("/") + 1);
    run.add(path, LAUNCHER_REASONS.get(name) ?? "a helper the executor declared it runs");
  }

  // write -----------------------------------------------------------------
  write.add(policy.auditLog, "the audit log file, appended to (never its folder)");
  const rotation = policy.auditRotation;
  if (rotation !== undefined && (rotation.bytes !== null || rotation.daily)) {
    // Only with built-in rotation: renaming the full log beside itself needs
    // write on its folder. Without it, the folder stays read-only to htmcp.
    write.add(auditFolder, "the audit log's folder: [audit] rotation renames the full log there");
  }
  if (policy.stateDir !== null) {
    write.add(
      policy.stateDir,
      "the state dir: OAuth secret, clients, revocations, audit signing key",
    );
  }
  if (policy.auditCheckpoints !== undefined) {
    const path = policy.auditCheckpoints.path;
    write.add(path, "the audit checkpoint file, appended to (never its folder)");
    read.add(path, "the audit checkpoint file: opened without following a symlink");
  }

  // net -------------------------------------------------------------------
  if (options.transport === "http") {
    const listen = options.listen ?? policy.http.listen;
    const checked = checkListen(listen);
    if (!checked.ok) return checked;
    // Deno compares host:port as text: localhost and 127.0.0.1 do not cover
    // each other, so the grant is the listen value exactly as served.
    net.add(checked.value, "the HTTP listen address");
    if (policy.http.tlsCert !== null) read.add(policy.http.tlsCert, "the TLS certificate");
    if (policy.http.tlsKey !== null) read.add(policy.http.tlsKey, "the TLS private key");
    const external = policy.auth.mode === "external" ? policy.auth.external : null;
    if (external !== null) {
      // Outbound to the identity provider only: its discovery document, key
      // set and introspection endpoint, each host:port exactly.
      const urls = [external.issuer, external.jwksUri, external.introspection?.endpoint];
      for (const text of urls) {
        if (text !== null && text !== undefined) {
          net.add(providerHost(text), "the external identity provider (keys, introspection)");
        }
      }
      if (external.introspection !== null) {
        read.add(external.introspection.secretFile, "the introspection client secret");
      }
    }
    for (const entry of policy.auth.clientIdMetadataAllow) {
      // A host entry allows its https documents; a URL entry exactly its host:port.
      const url = entry.includes("/") ? entry : `https://${entry}/`;
      net.add(providerHost(url), "client-id metadata documents (allowlisted)");
    }
  }

  if (policy.telemetry !== undefined) {
    // Outbound to the operator's OTLP collector only, in either transport,
    // and only when [telemetry] names one: without it no net grant exists.
    net.add(otlpNetGrant(policy.telemetry), "[telemetry] otlp_endpoint: the OTLP/HTTP collector");
  }
  const state = policy.state;
  if (state !== undefined && state.backend === "postgres") {
    // Outbound to the one database the policy's URL names, on any transport
    // (stdio sessions are kept there too); nothing else is reachable.
    const host = state.host.includes(":") ? `[${state.host}]` : state.host;
    net.add(`${host}:${state.port}`, "the PostgreSQL state store ([state] backend)");
    if (state.urlFile !== null) {
      read.add(state.urlFile, "the PostgreSQL state store's URL ([state] url_file)");
    }
  }
  // egress ------------------------------------------------------------------
  if (policy.sandbox.network === "allowlist" && policy.sandbox.mode !== "none") {
    // The proxy listens on a Unix socket in this folder (Deno checks read,
    // write and a net grant of the exact socket path, one per slot) and
    // connects out only to the listed host:ports, each granted exactly as
    // the proxy's own rule reads it.
    const dir = egressSocketDir(policy);
    read.add(dir, 'the egress proxy\'s socket folder (network = "allowlist")');
    write.add(dir, "the egress proxy's socket folder: it listens there");
    for (const path of egressSocketPaths(dir)) {
      net.add(`unix:${path}`, "an egress proxy socket slot (one per server of this policy)");
    }
    for (const rule of policy.sandbox.networkAllow) {
      net.add(denoNetGrant(rule), `[sandbox] network_allow "${rule.text}" (the egress proxy)`);
    }
  }

  // env -------------------------------------------------------------------
  for (const [name, reason] of HTMCP_ENV_NAMES) env.add(name, reason);
  for (const name of policy.envPass) env.add(name, "[env] pass: copied to every command");

  // refusals and deny-write -------------------------------------------------
  const protectedFolders = folderHoldingPrograms(policy, options.launcherPaths);
  for (const grant of write.grants()) {
    if (overlaps(grant.value, policy.jailRoot)) {
      return refuse(
        "UNSAFE_WRITE_GRANT",
        `Cannot grant write on "${grant.value}": it overlaps the jail root "${policy.jailRoot}", and a symlink the model plants there would be followed without a check.`,
      );
    }
    for (const [folder, why] of protectedFolders) {
      if (overlaps(grant.value, folder)) {
        return refuse(
          "UNSAFE_WRITE_GRANT",
          `Cannot grant write on "${grant.value}": it overlaps "${folder}", ${why}; write there lets the server replace a program it may run.`,
        );
      }
    }
    // Only the operator's CLI writes the always-allow rules (the launcher
    // grants it that write for `approvals allow --always` alone).
    if (alwaysFile !== null && overlaps(grant.value, alwaysFile)) {
      return refuse(
        "UNSAFE_WRITE_GRANT",
        `Cannot grant write on "${grant.value}": it holds the always-allow file "${alwaysFile}", which only the operator changes.`,
      );
    }
    if (policy.policyFile !== null && overlaps(grant.value, policy.policyFile)) {
      return refuse(
        "UNSAFE_WRITE_GRANT",
        `Cannot grant write on "${grant.value}": it holds the policy file "${policy.policyFile}", and nothing may change the policy.`,
      );
    }
  }
  denyWrite.add(policy.jailRoot, "the jail: never written by the server itself");
  if (policy.policyFile !== null) {
    denyWrite.add(policy.policyFile, "the policy: nothing changes it");
  }
  for (const [folder, why] of protectedFolders) denyWrite.add(folder, why);

  for (const list of [read, write, run, net, env, denyWrite]) {
    for (const grant of list.grants()) {
      // Deno splits flag values on "," with no escape (",," is an empty
      // path), and a control character would break a systemd unit line.
      if (hasUnrepresentable(grant.value)) {
        return refuse(
          "NOT_REPRESENTABLE",
          `Cannot grant "${grant.value}": Deno permission flags cannot express a comma or control character in a value; rename it.`,
        );
      }
    }
  }

  const set: PermissionSet = {
    transport: options.transport,
    read: read.grants(),
    write: write.grants(),
    run: run.grants(),
    net: net.grants(),
    env: env.grants(),
    denyWrite: denyWrite.grants(),
  };
  return { ok: true, set: Object.freeze(set) };
}

/** Every folder holding a program we may run or a child PATH folder, with why. */
function folderHoldingPrograms(
  policy: Policy,
  launcherPaths: readonly string[],
): ReadonlyMap<string, string> {
  const folders = new Map<string, string>();
  const add = (folder: string, why: string) => {
    const clean = cleanPath(folder);
    if (!folders.has(clean)) folders.set(clean, why);
  };
  for (const command of policy.allowlist.values()) {
    add(parentOf(command.path), `which holds allowlisted "${command.name}"`);
    add(parentOf(command.realPath), `which holds the real file of "${command.name}"`);
  }
  for (const path of launcherPaths) add(parentOf(path), `which holds the helper "${path}"`);
  const shell = policy.fullControl?.shell;
  if (shell !== undefined) {
    add(parentOf(shell.path), "which holds the full-control shell");
    add(parentOf(shell.realPath), "which holds the full-control shell's real file");
  }
  for (const dir of (policy.childEnv["PATH"] ?? "").split(":")) {
    if (isAbsolutePath(dir)) add(dir, "a folder on the child PATH");
  }
  return folders;
}

/** A `host:port` listen value, checked just enough to build a grant. */
function checkListen(
  listen: string | null,
): { ok: true; value: string } | { ok: false; code: PermissionSetErrorCode; reason: string } {
  if (listen === null) {
    return refuse(
      "BAD_LISTEN_ADDRESS",
      "Cannot build the HTTP permission set: no listen address ([http] listen or --http HOST:PORT).",
    );
  }
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(listen);
  const port = match === null ? NaN : Number(match[2]);
  if (match === null || port > 65_535) {
    return refuse(
      "BAD_LISTEN_ADDRESS",
      `Cannot grant net on "${listen}": a listen address is HOST:PORT (for example "127.0.0.1:8080").`,
    );
  }
  return { ok: true, value: listen };
}

function hasUnrepresentable(value: string): boolean {
  for (const char of value) {
    const code = char.charCodeAt(0);
    if (char === "," || code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

function refuse(
  code: PermissionSetErrorCode,
  reason: string,
): { ok: false; code: PermissionSetErrorCode; reason: string } {
  return { ok: false, code, reason };
}

/** Insertion-ordered, de-duplicated grants (the first reason wins). */
class GrantList {
  #grants = new Map<string, Grant>();

  add(value: string, reason: string): void {
    const key = value.startsWith("/") ? cleanPath(value) : value;
    if (!this.#grants.has(key)) this.#grants.set(key, Object.freeze({ value: key, reason }));
  }

  grants(): readonly Grant[] {
    return Object.freeze([...this.#grants.values()]);
  }
}

/** `host:port` of a provider URL, the default port written out (Deno compares text). */
function providerHost(text: string): string {
  const url = new URL(text);
  const port = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80";
  return `${url.hostname}:${port}`;
}
