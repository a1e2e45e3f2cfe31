/**
 * Turns the command word into one allowlisted `ResolvedCommand`, or refuses.
 *
 * Name checks are where spelling tricks live, so the word must be written
 * plainly: unquoted, unescaped, printable ASCII, no `=` (an environment
 * assignment in a shell), and only the characters real command names use.
 * A bare name is looked up exactly (case-sensitive) in the allowlist. A path
 * is accepted only when it is absolute, in normal form, names an allowlisted
 * basename, and resolves to the very file that name resolved to at startup;
 * relative paths (`./ls`, `bin/ls`) are refused, since they name whatever
 * the jail holds. The denylist always wins: it is checked, case-insensitively,
 * against the typed basename, the allowlisted name and the basename of every
 * real path involved.
 *
 * @module
 */

import type { Policy, ResolvedCommand } from "../config/types.ts";
import type { Word } from "./tokenize.ts";
import type { PolicyIo } from "./types.ts";

/** The command word's resolution. */
export type CommandWordResult =
  | { readonly ok: true; readonly command: ResolvedCommand }
  | { readonly ok: false; readonly reason: string };

/** Characters real command names and absolute paths to them are made of. */
const COMMAND_CHARACTERS = /^[A-Za-z0-9._+\-/]+$/;

/** The last path segment of `path` (text after the last `/`). */
export function basenameOf(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function refuse(reason: string): CommandWordResult {
  return { ok: false, reason };
}

function deniedName(policy: Policy, names: readonly string[]): string | null {
  const denied = new Set([...policy.denylist].map((name) => name.toLowerCase()));
  return names.find((name) => denied.has(name.toLowerCase())) ?? null;
}

function checkSpelling(word: Word): string | null {
  const text = word.text;
  if (word.quoted) {
    return `Cannot run "${text}": the command name is quoted or escaped; write it plainly, ` +
      `since quoting a command name is a known way around name checks.`;
  }
  if (/[^\x21-\x7e]/.test(text)) {
    return `Cannot run "${text}": the command name contains non-ASCII or blank characters, ` +
      `which can imitate an allowed name.`;
  }
  if (text.includes("=")) {
    return `Cannot run "${text}": it looks like an environment assignment before a command; ` +
      `htmcp never takes environment variables from the command text.`;
  }
  const odd = Array.from(text).find((character) => !COMMAND_CHARACTERS.test(character));
  if (odd !== undefined) {
    return `Cannot run "${text}": "${odd}" is not a character command names use here.`;
  }
  return null;
}

function resolvePathWord(text: string, policy: Policy, io: PolicyIo): CommandWordResult {
  const name = basenameOf(text);
  if (!text.startsWith("/")) {
    return refuse(
      `Cannot run "${text}": a relative path to a command is refused; use the bare name "${name}".`,
    );
  }
  const segments = text.slice(1).split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
    return refuse(
      `Cannot run "${text}": the path has ".", ".." or an empty segment; use the bare name "${name}".`,
    );
  }
  const command = policy.allowlist.get(name);
  if (command === undefined) {
    return refuse(`Cannot run "${text}": "${name}" is not on the allowlist.`);
  }
  const realPath = io.realPath(text);
  if (realPath === null || realPath !== command.realPath) {
    return refuse(
      `Cannot run "${text}": it is not the same file as the allowlisted "${name}" (${command.path}).`,
    );
  }
  return { ok: true, command };
}

/**
 * Resolves the command word against the policy.
 *
 * @param word The first word, with its quoting.
 * @param policy The loaded policy.
 * @param io Resolves a path-qualified word to its real path.
 */
export function resolveCommandWord(word: Word, policy: Policy, io: PolicyIo): CommandWordResult {
  const spelling = checkSpelling(word);
  if (spelling !== null) return refuse(spelling);
  const text = word.text;
  const typedName = basenameOf(text);
  if (typedName === "") return refuse(`Cannot run "${text}": it names a folder, not a command.`);
  if (deniedName(policy, [typedName]) !== null) {
    return refuse(
      text === typedName
        ? `Cannot run "${text}": it is on the denylist.`
        : `Cannot run "${text}": "${typedName}" is on the denylist.`,
    );
  }
  const resolved = text.includes("/") ? resolvePathWord(text, policy, io) : (() => {
    const command = policy.allowlist.get(text);
    return command === undefined
      ? refuse(`Cannot run "${text}": it is not on the allowlist.`)
      : { ok: true as const, command };
  })();
  if (!resolved.ok) return resolved;
  const realName = basenameOf(resolved.command.realPath);
  const denied = deniedName(policy, [resolved.command.name, realName]);
  if (denied !== null) {
    return refuse(
      `Cannot run "${text}": it resolves to "${resolved.command.realPath}", and "${denied}" is on the denylist.`,
    );
  }
  return resolved;
}
