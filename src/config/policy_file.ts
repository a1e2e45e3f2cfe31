/**
 * Reading and parsing the policy file: one sentence for a missing, unreadable
 * or malformed file, with the TOML line and column when the parser knows them.
 *
 * @module
 */
import { parse, TomlError } from "smol-toml";
import { type Checked, fail, pass, quote } from "./_checked.ts";

/** A policy is a few kilobytes; a file this large is a mistake, not a policy. */
const MAX_POLICY_BYTES = 1024 * 1024;

/**
 * Stands in for TOML date values before schema validation: no policy key
 * takes a date, and zod would otherwise accept a `Date` where a table is
 * expected. A symbol fails every schema type, so the key is reported.
 */
const DATE_STAND_IN = Symbol("TOML date");

/**
 * Reads and parses `path`.
 *
 * @param path absolute path of the policy file
 * @param label how the message names the file's source (`--policy`, `HTMCP_POLICY_FILE`)
 * @returns the raw document (dates replaced), or a sentence
 */
export async function readPolicyFile(path: string, label: string): Promise<Checked<unknown>> {
  let bytes: Uint8Array;
  try {
    const info = await Deno.stat(path);
    if (info.isDirectory) return fail(`Policy file ${quote(path)} (${label}) is a directory.`);
    if (info.size > MAX_POLICY_BYTES) {
      return fail(`Policy file ${quote(path)} (${label}) is larger than 1 MiB.`);
    }
    bytes = await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return fail(`Policy file ${quote(path)} (${label}) does not exist.`);
    }
    const why = error instanceof Error ? error.message : String(error);
    return fail(`Policy file ${quote(path)} (${label}) cannot be read: ${why}.`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return fail(`Policy file ${quote(path)} (${label}) is not valid UTF-8.`);
  }
  try {
    return pass(replaceDates(parse(text)));
  } catch (error) {
    if (!(error instanceof TomlError)) throw error;
    const what = (error.message.split("\n")[0] ?? "").replace(/^Invalid TOML document: /, "");
    return fail(
      `Policy file ${
        quote(path)
      } is not valid TOML at line ${error.line}, column ${error.column}: ${what}.`,
    );
  }
}

function replaceDates(value: unknown): unknown {
  if (value instanceof Date) return DATE_STAND_IN;
  if (Array.isArray(value)) return value.map(replaceDates);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = { __proto__: null } as unknown as Record<string, unknown>;
    for (const [key, inner] of Object.entries(value)) out[key] = replaceDates(inner);
    return out;
  }
  return value;
}
