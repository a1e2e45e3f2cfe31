/**
 * Test harness for the HTTP transport: a real server context (audit log,
 * executor) over a temp jail, the real `serveHttp` on 127.0.0.1 port 0, and
 * helpers to read the audit log and to mint tokens with the server's own
 * signing secret (for expired/foreign-audience/tampered token tests).
 */
import { join } from "node:path";
import type {
  AuthSettings,
  HttpSettings,
  LinkSettings,
  Policy,
} from "../../../src/config/types.ts";
import { createServerContext, type ServerContext } from "../../../src/server/mod.ts";
import {
  type HttpServerHandle,
  serveHttp,
  type SessionLimits,
} from "../../../src/transport/http/mod.ts";
import { makePolicy } from "../../_helpers/policy.ts";
import { assertSandboxMode, prepareJail } from "../../_helpers/jail.ts";

export const PIN = "plum-7-harbor";

export interface HarnessOptions {
  readonly http?: Partial<HttpSettings>;
  readonly auth?: Partial<AuthSettings>;
  readonly limits?: Partial<Policy["limits"]>;
  /** `[links]` settings over the defaults. */
  readonly links?: Partial<LinkSettings>;
  readonly adminPin?: string | null;
  readonly listen?: string;
  readonly baseUrl?: string | null;
  readonly sessionLimits?: SessionLimits;
  readonly refusalLimits?: { readonly intervalMs: number; readonly maxPairs: number };
  readonly sseKeepAliveMs?: number;
  /** Allowlisted commands (default: ls, cat, echo, true, sleep, touch). */
  readonly allow?: readonly string[];
  /** Further policy fields (e.g. `auditExposeToModel`). */
  readonly policy?: Partial<Policy>;
}

export interface HttpHarness {
  /** The bound origin, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly mcpUrl: URL;
  readonly dir: string;
  readonly jail: string;
  readonly stateDir: string;
  readonly auditPath: string;
  readonly policy: Policy;
  readonly context: ServerContext;
  readonly server: HttpServerHandle;
  /** Startup warnings the server printed. */
  readonly warnings: readonly string[];
  /** The audit log's `event` records, parsed. */
  events(name?: string): Promise<Record<string, unknown>[]>;
  /** Every audit record, parsed. */
  records(): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** Builds the policy the harness would serve (also for startup-refusal tests). */
export function harnessPolicy(dir: string, options: HarnessOptions = {}): Policy {
  const allow = options.allow ?? ["ls", "cat", "echo", "true", "sleep", "touch"];
  const base = makePolicy({ jailRoot: join(dir, "jail"), allow });
  return makePolicy({
    jailRoot: join(dir, "jail"),
    allow,
    auditLog: join(dir, "audit.jsonl"),
    overrides: {
      stateDir: join(dir, "state"),
      http: { ...base.http, ...options.http },
      auth: { ...base.auth, ...options.auth },
      limits: { ...base.limits, ...options.limits },
      links: { ...base.links, ...options.links },
      ...options.policy,
    },
  });
}

/** Starts a server; throws when it cannot start (a harness bug). */
export async function startHttp(options: HarnessOptions = {}): Promise<HttpHarness> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp-http-" });
  const jail = join(dir, "jail");
  await Deno.mkdir(jail);
  await prepareJail(jail);
  const policy = harnessPolicy(dir, options);
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  const context = built.context;
  const warnings: string[] = [];
  const started = await serveHttp(context, {
    listen: options.listen ?? "127.0.0.1:0",
    baseUrl: options.baseUrl ?? null,
    adminPin: options.adminPin === undefined ? PIN : options.adminPin,
    warn: (line) => warnings.push(line),
    ...(options.sessionLimits === undefined ? {} : { sessionLimits: options.sessionLimits }),
    ...(options.refusalLimits === undefined ? {} : { refusalLimits: options.refusalLimits }),
    ...(options.sseKeepAliveMs === undefined ? {} : { sseKeepAliveMs: options.sseKeepAliveMs }),
  });
  if (!started.ok) {
    await context.close("harness failed");
    await Deno.remove(dir, { recursive: true });
    throw new Error(started.message);
  }
  const server = started.server;
  const records = async () => {
    const text = await Deno.readTextFile(policy.auditLog);
    return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  };
  return {
    url: server.url,
    mcpUrl: new URL(`${server.url}/mcp`),
    dir,
    jail,
    stateDir: policy.stateDir as string,
    auditPath: policy.auditLog,
    policy,
    context,
    server,
    warnings,
    records,
    async events(name) {
      return (await records()).filter((r) =>
        r.kind === "event" && (name === undefined || r.event === name)
      );
    },
    async close() {
      await server.shutdown();
      await context.close("test finished");
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Runs `fn` with a harness and always cleans up. */
export async function withHttp(
  options: HarnessOptions,
  fn: (h: HttpHarness) => Promise<void>,
): Promise<void> {
  const h = await startHttp(options);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

/** The headers a Streamable HTTP client sends with a POST. */
export const MCP_POST_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "application/json",
  "accept": "application/json, text/event-stream",
});

/** A JSON-RPC `initialize` request body. */
export function initializeBody(id = 1): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "htmcp-test", version: "0" },
    },
  });
}

/** Reads an SSE or JSON answer to one JSON-RPC request and returns the message. */
export async function readRpc(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  if ((response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    for (const line of text.split("\n")) {
      if (line.startsWith("data: ") && line.length > 6) return JSON.parse(line.slice(6));
    }
    throw new Error(`No data event in ${JSON.stringify(text)}`);
  }
  return JSON.parse(text);
}

/** `policy` with commands in the kernel sandbox (the users' default), never the path check alone. */
export function inKernelSandbox<P extends Policy>(policy: P): P {
  return { ...policy, sandbox: { ...policy.sandbox, mode: "bwrap", acceptPathCheckOnly: false } };
}

/** A server started by {@linkcode serveSandboxed}. */
export interface SandboxedServer {
  readonly context: ServerContext;
  readonly server: HttpServerHandle;
  /** `${server.url}/mcp`. */
  readonly mcpUrl: URL;
  /** Shuts the listener down, then the context (its running commands and audit log). */
  close(): Promise<void>;
}

/**
 * Serves `policy` (see {@linkcode inKernelSandbox}) on 127.0.0.1 with the
 * admin PIN, after proving that its commands really run in bubblewrap, so a
 * test cannot pass because the sandbox was silently off.
 */
export async function serveSandboxed(
  policy: Policy,
  baseUrl: string | null = null,
): Promise<SandboxedServer> {
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  const context = built.context;
  try {
    await assertSandboxMode(context.executor, "bwrap");
    const started = await serveHttp(context, {
      listen: "127.0.0.1:0",
      baseUrl,
      adminPin: PIN,
      warn: () => {},
    });
    if (!started.ok) throw new Error(started.message);
    const server = started.server;
    return {
      context,
      server,
      mcpUrl: new URL(`${server.url}/mcp`),
      async close() {
        await server.shutdown();
        await context.close("test finished");
      },
    };
  } catch (error) {
    await context.close("test setup failed");
    throw error;
  }
}
