/**
 * The command lists: allowlist (resolved to absolute paths), denylist, and
 * `[[rules]]`. Deny by default; the denylist always wins.
 *
 * @module
 */
import { basename } from "../path/mod.ts";
import type { ArgRule, ResolvedCommand } from "./types.ts";
import type { PolicyFile } from "./schema.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";
import { checkCommandName, resolveCommand } from "./commands.ts";
import { isInside } from "./paths.ts";

/** The lists as the policy holds them, before freezing. */
export interface CommandLists {
  readonly allowlist: ReadonlyMap<string, ResolvedCommand>;
  readonly denylist: ReadonlySet<string>;
  readonly rules: readonly ArgRule[];
  readonly warnings: readonly string[];
}

/** One `[allowlist] commands` entry: the name, and the justification when every run is prompted. */
interface AllowEntry {
  readonly name: string;
  readonly justification: string | null;
}

const ENTRY_KEYS: ReadonlySet<string> = new Set(["name", "decision", "justification"]);

/**
 * Reads the allowlist's entries: `"ls"`, or `{ name = "npm", decision =
 * "prompt", justification = "..." }` (`decision = "allow"` is the plain
 * name). Anything else is refused with the entry's key, so a typo never
 * allows a command unprompted.
 */
function allowEntries(raw: readonly (string | Record<string, unknown>)[]): Checked<AllowEntry[]> {
  const out: AllowEntry[] = [];
  for (const [index, entry] of raw.entries()) {
    const key = `allowlist.commands[${index + 1}]`;
    if (typeof entry === "string") {
      out.push({ name: entry, justification: null });
      continue;
    }
    const unknown = Object.keys(entry).find((k) => !ENTRY_KEYS.has(k));
    if (unknown !== undefined) {
      return fail(
        `Policy key "${key}.${unknown}" is not recognised; the keys allowed in an allowlist entry are: name, decision, justification.`,
      );
    }
    const { name, decision = "allow", justification } = entry;
    if (typeof name !== "string") {
      return fail(`Policy key "${key}.name" is missing; it must be the command's name.`);
    }
    if (decision !== "allow" && decision !== "prompt") {
      return fail(`Policy key "${key}.decision" must be "allow" or "prompt".`);
    }
    if (decision === "allow") {
      if (justification !== undefined) {
        return fail(
          `Policy key "${key}" takes a justification only with decision = "prompt".`,
        );
      }
      out.push({ name, justification: null });
      continue;
    }
    if (typeof justification !== "string" || justification.trim() === "") {
      return fail(
        `Policy key "${key}.justification" is required for decision = "prompt": it is what the human approving the command reads.`,
      );
    }
    out.push({ name, justification });
  }
  return pass(out);
}

function checkNames(names: readonly string[], key: string): Checked<string[]> {
  const out: string[] = [];
  for (const [index, name] of names.entries()) {
    const checked = checkCommandName(name, `${key}[${index + 1}]`);
    if (!checked.ok) return checked;
    if (!out.includes(name)) out.push(name);
  }
  return pass(out);
}

/**
 * Validates and resolves the lists.
 *
 * @param file the validated policy file
 * @param pathDirs the child PATH folders, in order
 * @param jailRoot the jail's real path: a binary inside it could be replaced by the model
 */
export async function buildCommandLists(
  file: PolicyFile,
  pathDirs: readonly string[],
  jailRoot: string,
): Promise<Checked<CommandLists>> {
  const entries = allowEntries(file.allowlist?.commands ?? []);
  if (!entries.ok) return entries;
  const allowNames = checkNames(entries.value.map((e) => e.name), "allowlist.commands");
  if (!allowNames.ok) return allowNames;
  const denyNames = checkNames(file.denylist?.commands ?? [], "denylist.commands");
  if (!denyNames.ok) return denyNames;
  const denylist = new Set(denyNames.value);
  const warnings: string[] = [];

  const allowlist = new Map<string, ResolvedCommand>();
  for (const name of allowNames.value) {
    if (denylist.has(name)) {
      warnings.push(
        `Command ${
          quote(name)
        } is on both the allowlist and the denylist; the denylist wins, so it can never run.`,
      );
      continue;
    }
    const resolved = await resolveCommand(name, pathDirs);
    if (!resolved.ok) return resolved;
    const { path, realPath } = resolved.value;
    if (isInside(jailRoot, path) || isInside(jailRoot, realPath)) {
      return fail(
        `Policy key "allowlist.commands" lists ${quote(name)}, which resolves to ${
          quote(realPath)
        } inside the jail root, where the model could replace it.`,
      );
    }
    // "A command name is matched exactly on its basename after resolution":
    // `sh` -> /usr/bin/dash is refused when `dash` is denylisted.
    const realName = basename(realPath);
    if (realName !== name && denylist.has(realName)) {
      warnings.push(
        `Allowlisted command ${quote(name)} resolves to ${quote(realPath)}, whose name ${
          quote(realName)
        } is on the denylist; the denylist wins, so it can never run.`,
      );
      continue;
    }
    allowlist.set(name, resolved.value);
  }

  const rules: ArgRule[] = [];
  for (const [index, rule] of (file.rules ?? []).entries()) {
    const key = `rules[${index + 1}]`;
    const command = checkCommandName(rule.command, `${key}.command`);
    if (!command.ok) return command;
    // A rule for a name that is not allowlisted is almost always a typo, and a
    // typo here means the restriction the operator wrote is not in force.
    if (!allowNames.value.includes(rule.command)) {
      return fail(
        `Policy key "${key}.command" is ${
          quote(rule.command)
        }, which is not on the allowlist, so the rule would never apply.`,
      );
    }
    const prompt = rule.decision === "prompt";
    const shape = ruleShapeError(key, rule, prompt);
    if (shape !== null) return fail(shape);
    const argKey = prompt ? "args" : "deny_args";
    const denyArgs = (prompt ? rule.args : rule.deny_args)!.map((words) =>
      words.trim().split(/\s+/).join(" ")
    );
    const blank = denyArgs.findIndex((words) => words === "");
    if (blank >= 0) {
      return fail(`Policy key "${key}.${argKey}[${blank + 1}]" holds only whitespace.`);
    }
    rules.push({
      command: rule.command,
      denyArgs,
      reason: rule.reason ?? rule.justification ?? "",
      enforce: rule.enforce ?? "deny",
      // Deny rules keep their old shape; only a prompt rule carries the two keys.
      ...(prompt ? { decision: "prompt" as const, justification: rule.justification! } : {}),
    });
  }

  // An allowlist entry with decision = "prompt" holds every run of its
  // command: a prompt rule that matches any arguments, judged like the
  // others after every refusing check.
  for (const entry of entries.value) {
    if (entry.justification === null) continue;
    rules.push({
      command: entry.name,
      denyArgs: [],
      reason: entry.justification,
      enforce: "deny",
      decision: "prompt",
      justification: entry.justification,
      everyRun: true,
    });
  }

  if (allowlist.size === 0) {
    warnings.push("The allowlist is empty, so every command will be refused.");
  }
  return pass({ allowlist, denylist, rules, warnings });
}

/**
 * A deny rule needs `deny_args` and `reason`; a prompt rule needs `args` and
 * the `justification` the human reads, and takes no `enforce` (a prompt is
 * never a rollout warning). Mixing the two shapes is refused, so a rule
 * never silently does the other thing.
 */
function ruleShapeError(
  key: string,
  rule: NonNullable<PolicyFile["rules"]>[number],
  prompt: boolean,
): string | null {
  if (prompt) {
    if (rule.args === undefined) {
      return `Policy key "${key}.args" is required for decision = "prompt".`;
    }
    if (rule.justification === undefined) {
      return `Policy key "${key}.justification" is required for decision = "prompt": it is what the human approving the command reads.`;
    }
    if (rule.deny_args !== undefined || rule.enforce !== undefined) {
      return `Policy key "${key}" has decision = "prompt", which takes args and justification, not deny_args or enforce.`;
    }
    return null;
  }
  if (rule.deny_args === undefined) {
    return `Policy key "${key}.deny_args" is missing; it must be an array of strings.`;
  }
  if (rule.reason === undefined) {
    return `Policy key "${key}.reason" is missing; it must be a non-empty string.`;
  }
  if (rule.args !== undefined || rule.justification !== undefined) {
    return `Policy key "${key}" takes args and justification only with decision = "prompt".`;
  }
  return null;
}
