/**
 * Test fixture: a `Policy` literal for unit tests of modules that take a
 * loaded policy. Commands are resolved on the default child PATH the same way
 * the loader does (first executable match, path text kept, realpath beside it),
 * so tests exercise real binaries. End-to-end tests use the real loader with a
 * real policy file instead.
 */
import {
  DEFAULT_CHILD_PATH,
  type Limits,
  type Policy,
  type ResolvedCommand,
} from "../../src/config/types.ts";

/** Finds `name` on `DEFAULT_CHILD_PATH`, as the loader does. */
export function resolveOnPath(name: string): ResolvedCommand {
  for (const dir of DEFAULT_CHILD_PATH.split(":")) {
    const path = `${dir}/${name}`;
    try {
      const info = Deno.statSync(path);
      if (info.isFile && ((info.mode ?? 0) & 0o111) !== 0) {
        return { name, path, realPath: Deno.realPathSync(path) };
      }
    } catch {
      // not in this folder: keep looking
    }
  }
  throw new Error(`Test fixture cannot resolve "${name}" on ${DEFAULT_CHILD_PATH}`);
}

export const TEST_LIMITS: Limits = {
  timeoutMs: 5_000,
  maxOutputBytes: 1024 * 1024,
  maxConcurrent: 4,
  queueMax: 64,
  queueWaitMs: 10_000,
  cpuSeconds: null,
  addressSpaceBytes: null,
  maxProcesses: null,
  fileSizeBytes: null,
  openFiles: null,
  progressIntervalMs: 5_000,
  foregroundMs: 45_000,
  maxTimeoutMs: 600_000,
  jobOutputBytes: 1024 * 1024,
  jobRetentionMs: 3_600_000,
  inlineOutputBytes: 32 * 1024,
};

export interface TestPolicyOptions {
  jailRoot: string;
  auditLog?: string;
  allow?: readonly string[];
  deny?: readonly string[];
  overrides?: Partial<Policy>;
}

/** Builds a frozen test policy with real resolved commands. */
export function makePolicy(options: TestPolicyOptions): Policy {
  const allow = options.allow ?? ["ls", "cat", "echo", "true", "sleep", "sh", "git", "grep"];
  const allowlist = new Map(allow.map((name) => [name, resolveOnPath(name)]));
  const policy: Policy = {
    policyFile: null,
    jailRoot: Deno.realPathSync(options.jailRoot),
    auditLog: options.auditLog ?? "/dev/null",
    auditFailMode: "closed",
    stateDir: null,
    allowlist,
    denylist: new Set(options.deny ?? ["rm", "sudo", "dd", "mkfs", "shutdown", "reboot"]),
    rules: [],
    tests: [],
    argSchemas: new Map(),
    disabledGuards: new Set(),
    confineArgs: true,
    limits: TEST_LIMITS,
    redaction: { enabled: true, entropyFallback: false, extraPatterns: [] },
    envPass: ["PATH", "HOME", "LANG"],
    childEnv: { PATH: DEFAULT_CHILD_PATH, LANG: "C.UTF-8" },
    showJailPath: false,
    sessions: { idleTtlMs: 1_800_000, maxPerCaller: 8 },
    links: {
      enabled: true,
      maxFileBytes: 10_485_760,
      defaultTtlMs: 3_600_000,
      maxTtlMs: 86_400_000,
      maxLinksPerCaller: 32,
    },
    // Layer-1 unit tests need no sandbox; executor tests override this.
    sandbox: {
      mode: "none",
      network: "none",
      networkAllow: [],
      acceptPathCheckOnly: true,
      user: null,
    },
    http: {
      listen: null,
      baseUrl: null,
      tlsCert: null,
      tlsKey: null,
      allowedOrigins: [],
      allowedHosts: [],
      maxRequestBytes: 16_000_000,
      maxRegistrationBytes: 16_384,
      maxConcurrentPerClient: 2,
      maxConnections: 0,
      headerTimeoutMs: 10_000,
      idleTimeoutMs: 120_000,
    },
    auth: {
      mode: "oauth",
      allowLocalhostBypass: false,
      allowPlainPkce: false,
      accessTokenTtlSeconds: 3600,
      clientIdMetadataAllow: [],
      external: null,
    },
    warnings: [],
    ...options.overrides,
  };
  return Object.freeze(policy);
}
