/**
 * Loader step for `[commands.NAME]` argument schemas: validates them against
 * the allowlist and builds the frozen lookup the policy engine uses.
 *
 * @module
 */
import { type Checked, fail, pass, quote } from "./_checked.ts";
import { FrozenMap, FrozenSet } from "./freeze.ts";
import type { PolicyFile } from "./schema.ts";
import type { ArgSchema, FlagList } from "./types.ts";

/**
 * @param file The validated policy file.
 * @param allowlist The allowlisted names.
 * @returns Schemas by command name, or one sentence naming the key.
 */
export function buildArgSchemas(
  file: PolicyFile,
  allowlist: ReadonlyMap<string, unknown>,
): Checked<ReadonlyMap<string, ArgSchema>> {
  const schemas = new Map<string, ArgSchema>();
  // Entries are read as own properties of a prototype-free copy: a command
  // called "constructor" can never pick up an inherited schema.
  for (const [name, entry] of Object.entries(file.commands ?? {})) {
    const key = `commands.${name}`;
    if (!allowlist.has(name)) {
      return fail(
        `Policy key ${quote(key)} names "${name}", which is not on the allowlist, so its ` +
          `schema would never apply.`,
      );
    }
    const subcommands = entry.subcommands === undefined ? null : new FrozenSet(entry.subcommands);
    const flags = entry.flags ?? [];
    if (subcommands === null && !Array.isArray(flags)) {
      return fail(
        `Policy key ${quote(`${key}.flags`)} is a table by subcommand, but ${quote(key)} ` +
          `lists no subcommands.`,
      );
    }
    if (subcommands === null && entry.global_flags !== undefined) {
      return fail(
        `Policy key ${quote(`${key}.global_flags`)} needs ${quote(`${key}.subcommands`)}.`,
      );
    }
    const subcommandFlags = new Map<string, ReturnType<typeof flagListOf>>();
    if (subcommands !== null) {
      if (Array.isArray(flags) && flags.length > 0) {
        return fail(
          `Policy key ${quote(`${key}.flags`)} must be a table by subcommand ` +
            `(flags.commit = [...]) when ${quote(key)} lists subcommands.`,
        );
      }
      if (!Array.isArray(flags)) {
        for (const [subcommand, list] of Object.entries(flags)) {
          if (!subcommands.has(subcommand)) {
            return fail(
              `Policy key ${quote(`${key}.flags.${subcommand}`)} is for a subcommand that ` +
                `${quote(`${key}.subcommands`)} does not list.`,
            );
          }
          subcommandFlags.set(subcommand, flagListOf(list));
        }
      }
    }
    schemas.set(
      name,
      Object.freeze({
        subcommands,
        flags: flagListOf(Array.isArray(flags) ? flags : []),
        subcommandFlags: new FrozenMap(subcommandFlags),
        globalFlags: flagListOf(entry.global_flags ?? []),
      }),
    );
  }
  return pass(new FrozenMap(schemas));
}

/**
 * Builds a flag list from the policy's spelling (`"--message="` takes a value).
 *
 * @param spelled The flags as written in the policy.
 * @returns The list.
 */
function flagListOf(spelled: readonly string[]): FlagList {
  const names = new Set<string>();
  const takesValue = new Set<string>();
  const endsOptions = new Set<string>();
  for (const entry of spelled) {
    const ends = entry.endsWith("=...");
    const value = ends || entry.endsWith("=");
    const name = ends ? entry.slice(0, -4) : value ? entry.slice(0, -1) : entry;
    names.add(name);
    if (value) takesValue.add(name);
    if (ends) endsOptions.add(name);
  }
  return Object.freeze({ names, takesValue, endsOptions });
}
