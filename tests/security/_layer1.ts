/**
 * Fixture for the layer-1 (policy + jail) security tests: a real temp tree
 *
 * ```
 * <base>/jail/            the jail (canary.txt, notes.txt, deep/a/b/c/d/e/f/)
 * <base>/outside/         canaries outside (secret.txt), owned by the commands' uid
 * <base>/audit.jsonl      the real audit log
 * ```
 *
 * and a real server context (real audit log, real executor) built from a
 * test policy in sandbox mode "none": these tests prove what layer 1 refuses
 * on its own, so they assert that no kernel sandbox is in force. Every
 * none-mode policy of these tests is written by `layer1Overrides()` alone.
 */
import { equal, ok } from "node:assert/strict";
import { makePolicy } from "../_helpers/policy.ts";
import { chownTree, prepareJail } from "../_helpers/jail.ts";
import { createServerContext, type ServerContext } from "../../src/server/mod.ts";
import { runCommandTool } from "../../src/tools/run_command.ts";
import { explainCommandTool } from "../../src/tools/explain_command.ts";
import { STDIO_CALLER } from "../../src/tools/caller.ts";
import { DEFAULT_CHILD_PATH, type Policy } from "../../src/config/types.ts";
import type { CommandResult } from "../../src/result/codes.ts";

/** The one place these tests choose mode "none" (and any opt-in it needs). */
export function layer1Overrides(): Partial<Policy> {
  return {
    sandbox: {
      mode: "none",
      network: "none",
      networkAllow: [],
      acceptPathCheckOnly: true,
      user: null,
    },
  };
}

/** The same, as TOML for the real-client harness (`extraToml`). */
export const LAYER1_TOML = "";

export const LAYER1_ALLOW = [
  "ls",
  "cat",
  "grep",
  "cp",
  "mv",
  "tar",
  "git",
  "diff",
  "find",
  "du",
  "touch",
  "mkdir",
  "echo",
  "make",
  "head",
];

export interface Layer1 {
  readonly base: string;
  readonly jail: string;
  readonly outside: string;
  readonly context: ServerContext;
  run(command: string, cwd?: string): Promise<CommandResult>;
  explain(command: string, cwd?: string): Promise<CommandResult>;
  records(): Promise<Record<string, unknown>[]>;
  /** Every path under `<base>` except the audit log, with contents or link text. */
  snapshot(): Promise<Map<string, string>>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Builds the tree; the context only when `withContext` (raw-tool proofs need none). */
export async function makeTree(): Promise<{ base: string; jail: string; outside: string }> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "htmcp-l1-" }));
  const jail = `${base}/jail`;
  const outside = `${base}/outside`;
  await Deno.mkdir(`${jail}/deep/a/b/c/d/e/f`, { recursive: true });
  await Deno.mkdir(outside);
  await Deno.writeTextFile(`${jail}/canary.txt`, "inside canary\n");
  await Deno.writeTextFile(`${jail}/notes.txt`, "notes\n");
  await Deno.writeTextFile(`${outside}/secret.txt`, "TOP-SECRET-OUTSIDE\n");
  return { base, jail, outside };
}

export async function layer1(allow: readonly string[] = LAYER1_ALLOW): Promise<Layer1> {
  const tree = await makeTree();
  // Commands run as the jail's owner (never root): hand the jail to it, and
  // the outside folder too, so that only htmcp's refusal keeps a command
  // from writing there (a folder closed to that uid would make every
  // "nothing changed outside" check pass against any build).
  await prepareJail(tree.jail);
  await chownTree(tree.outside);
  const auditLog = `${tree.base}/audit.jsonl`;
  const policy = makePolicy({
    jailRoot: tree.jail,
    auditLog,
    allow,
    deny: ["rm", "ln"],
    overrides: layer1Overrides(),
  });
  equal(policy.sandbox.mode, "none", "these tests prove layer 1 alone");
  const built = await createServerContext(policy);
  if (!built.ok) throw new Error(built.message);
  const context = built.context;
  return {
    ...tree,
    context,
    run: (command, cwd) =>
      runCommandTool(context, STDIO_CALLER, cwd === undefined ? { command } : { command, cwd }),
    explain: (command, cwd) =>
      explainCommandTool(context, STDIO_CALLER, cwd === undefined ? { command } : { command, cwd }),
    async records() {
      const text = await Deno.readTextFile(auditLog).catch(() => "");
      return text.split("\n").filter(Boolean).map((line) => JSON.parse(line));
    },
    snapshot: () => snapshotTree(tree.base, auditLog),
    async [Symbol.asyncDispose]() {
      await context.close("test done");
      await Deno.remove(tree.base, { recursive: true });
    },
  };
}

/** Contents of every file and the text of every link under `root`, by path. */
export async function snapshotTree(root: string, skip = ""): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const walk = async (folder: string) => {
    // A folder deeper than PATH_MAX cannot be listed by its path; note it.
    if (folder.length >= 4000) return void found.set(folder, "too deep to list");
    for await (const entry of Deno.readDir(folder)) {
      const path = `${folder}/${entry.name}`;
      if (path === skip) continue;
      // A name that is not UTF-8 reaches Deno decoded leniently, and no path
      // built from it names the entry: recorded as such, compared all the same.
      if (entry.name.includes("\uFFFD")) found.set(path, "a name that is not UTF-8");
      else if (entry.isSymlink) found.set(path, `link:${await Deno.readLink(path)}`);
      else if (entry.isDirectory) {
        found.set(path, "dir");
        await walk(path);
      } else found.set(path, await Deno.readTextFile(path));
    }
  };
  await walk(root);
  return found;
}

/** Runs a tool directly in `cwd`, as the executor would but with no check at all. */
export async function runRaw(cwd: string, name: string, args: readonly string[]) {
  const out = await new Deno.Command(name, {
    args: [...args],
    cwd,
    clearEnv: true,
    env: { PATH: DEFAULT_CHILD_PATH, HOME: cwd, GIT_CONFIG_NOSYSTEM: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { success: out.success, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

/**
 * Asserts `command` is refused with `code` by run_command and by
 * explain_command, that nothing under the base changed, and that both
 * attempts are in the audit log with that code.
 */
export async function assertRefused(
  fx: Layer1,
  command: string,
  code: string,
  cwd?: string,
): Promise<CommandResult> {
  const before = await fx.snapshot();
  const explained = await fx.explain(command, cwd);
  equal(explained.code, code, `explain: ${explained.policy_reason}`);
  const result = await fx.run(command, cwd);
  equal(result.code, code, `run: ${result.policy_reason}`);
  equal(result.exit_code, null, "nothing ran");
  const after = await fx.snapshot();
  equal(JSON.stringify([...after]), JSON.stringify([...before]), "no file changed anywhere");
  const records = await fx.records();
  ok(
    records.some((r) => r.kind === "attempt" && r.command_raw === command && r.code === code),
    "the refused attempt is audited",
  );
  ok(
    records.some((r) => r.kind === "explain" && r.command_raw === command && r.code === code),
    "the explanation is audited",
  );
  return result;
}
