/**
 * End-to-end harness: a real policy file in a temp folder, the real htmcp
 * server started as a child process over stdio, and the real MCP SDK client
 * connected to it. Nothing of ours is mocked.
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CommandResult } from "../../src/result/codes.ts";
import { prepareJail } from "./jail.ts";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const MAIN = `${REPO}src/main.ts`;
/** `deno task htmcp`'s launcher: runs main.ts under the flags generated from the policy. */
export const LAUNCH = `${REPO}scripts/launch.ts`;

export interface HarnessOptions {
  /**
   * Allowlisted commands (default: a small read-mostly set); an object is
   * written as an inline-table entry (`{ name = "...", decision = "prompt", ... }`).
   */
  allow?: readonly (string | Readonly<Record<string, string>>)[];
  /** Extra TOML appended to the generated policy (sections such as `[limits]`). */
  extraToml?: string;
  /** Top-level TOML lines placed before any section (e.g. `audit_fail_mode = "open"`). */
  topToml?: string;
  /** Files to create in the jail, by relative path. */
  files?: Readonly<Record<string, string>>;
  /** Audit log path override (default: `<dir>/audit.jsonl`). */
  auditLog?: string;
  /**
   * The sandbox mode (default `"bwrap"`, the users' default). `"none"` writes
   * `accept_path_check_only = true` with it: only for tests of layer 1 alone.
   */
  sandbox?: "bwrap" | "none";
  /**
   * When given, the client declares form elicitation and answers every
   * `elicitation/create` with this function (absent: no elicitation).
   */
  elicit?: (params: { message: string }) => { action: "accept" | "decline" | "cancel" };
}

export interface Harness {
  readonly client: Client;
  /** Real path of the jail. */
  readonly jail: string;
  /** Temp folder holding the policy, audit log and canaries outside the jail. */
  readonly dir: string;
  readonly auditLog: string;
  readonly policyPath: string;
  /** Calls a tool and returns its structured `CommandResult`. */
  call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CommandResult>;
  /** Parsed audit records so far. */
  records(): Promise<Record<string, unknown>[]>;
  /** `describe_policy`'s structured result, through the real client. */
  describePolicy(): Promise<{ sandbox: string } & Record<string, unknown>>;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` to the server process (the launcher forwards it to the server). */
  kill(signal: Deno.Signal): void;
  close(): Promise<void>;
}

/** One allowlist entry as TOML (JSON strings are TOML basic strings). */
function allowEntry(entry: string | Readonly<Record<string, string>>): string {
  if (typeof entry === "string") return JSON.stringify(entry);
  const pairs = Object.entries(entry).map(([key, value]) => `${key} = ${JSON.stringify(value)}`);
  return `{ ${pairs.join(", ")} }`;
}

/** Writes a policy file for `jail` and returns its text. */
export function policyToml(
  jail: string,
  auditLog: string,
  options: HarnessOptions,
): string {
  const allow = options.allow ?? ["ls", "cat", "echo", "true", "sleep", "sh", "head", "touch"];
  return [
    `jail_root = ${JSON.stringify(jail)}`,
    `audit_log = ${JSON.stringify(auditLog)}`,
    options.topToml ?? "",
    "[allowlist]",
    `commands = [${allow.map(allowEntry).join(",")}]`,
    "[denylist]",
    `commands = ["rm", "sudo", "dd"]`,
    "[sandbox]",
    ...(options.sandbox === "none"
      ? [`mode = "none"`, "accept_path_check_only = true"]
      : [`mode = "bwrap"`]),
    options.extraToml ?? "",
  ].join("\n") + "\n";
}

/** A raw JSON-RPC `initialize` request (protocol 2025-06-18), for tests that speak lines. */
export function initializeMessage(id: number, clientName: string): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: clientName, version: "0" },
    },
  };
}

/**
 * The server's environment: a minimal one, as an MCP client would give, plus
 * the Deno cache folder so the child finds the npm packages offline.
 */
export function serverEnv(home: string): Record<string, string> {
  const denoDir = Deno.env.get("DENO_DIR") ??
    `${Deno.env.get("HOME") ?? "/root"}/.cache/deno`;
  return { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home, DENO_DIR: denoDir };
}

/**
 * Starts the server with a fresh jail and connects the real SDK client. The
 * jail is prepared for the sandbox (`prepareJail`): when the tests run as
 * root its files belong to uid 65534, which is then who commands run as.
 */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-e2e-" }));
  const jail = `${dir}/jail`;
  await Deno.mkdir(jail);
  for (const [name, text] of Object.entries(options.files ?? {})) {
    const path = `${jail}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, text);
  }
  await prepareJail(jail);
  const auditLog = options.auditLog ?? `${dir}/audit.jsonl`;
  const policyPath = `${dir}/policy.toml`;
  await Deno.writeTextFile(policyPath, policyToml(jail, auditLog, options));

  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    // Through the launcher, as `deno task htmcp` does: the server under test
    // runs with the Deno permissions generated from its policy, never -A.
    args: ["run", "--quiet", "--allow-all", LAUNCH, "serve", "--policy", policyPath],
    env: serverEnv(dir),
    stderr: "pipe",
  });
  let stderrText = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => {
    stderrText += new TextDecoder().decode(chunk);
  });
  const elicit = options.elicit;
  const client = new Client(
    { name: "htmcp-e2e", version: "1.0.0" },
    elicit === undefined ? {} : { capabilities: { elicitation: { form: {} } } },
  );
  if (elicit !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request.params));
  }
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`server did not start: ${stderrText}`, { cause: error });
  }
  return {
    client,
    jail,
    dir,
    auditLog,
    policyPath,
    async call(tool, args, signal) {
      const result = await client.callTool(
        { name: tool, arguments: args },
        undefined,
        signal === undefined ? { timeout: 60_000 } : { timeout: 60_000, signal },
      );
      return result.structuredContent as unknown as CommandResult;
    },
    async records() {
      const text = await Deno.readTextFile(auditLog).catch(() => "");
      return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
    },
    async describePolicy() {
      const result = await client.callTool({ name: "describe_policy", arguments: {} });
      return result.structuredContent as { sandbox: string } & Record<string, unknown>;
    },
    stderr: () => stderrText,
    kill(signal) {
      const pid = transport.pid;
      if (pid === null) throw new Error("the server is not running");
      Deno.kill(pid, signal);
    },
    async close() {
      await client.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** True when `path` exists; only `NotFound` counts as absent (see `exists.ts`). */
export { exists } from "./exists.ts";
