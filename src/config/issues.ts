/**
 * Turns the first zod issue into the one sentence startup prints, naming the
 * key the operator must fix and the value found there.
 *
 * @module
 */
import * as z from "zod";
import { PolicyFileSchema } from "./schema.ts";
import { quote } from "./_checked.ts";

type Path = readonly PropertyKey[];

/** `rules[2].deny_args`: tables by name, array entries numbered from 1 as an operator counts them. */
export function keyPath(path: Path): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part + 1}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** The raw TOML value at `path`, or undefined when absent. */
function valueAt(root: unknown, path: Path): unknown {
  let current: unknown = root;
  for (const part of path) {
    if (current === null || typeof current !== "object") return undefined;
    if (!Object.hasOwn(current, part)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

/** How a TOML value reads in a sentence. */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return quote(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  // The reader replaces TOML dates with a symbol (no key takes a date).
  if (value instanceof Date || typeof value === "symbol") return "a date";
  if (Array.isArray(value)) return "an array";
  if (value !== null && typeof value === "object") return "a table";
  return String(value);
}

/** `node` without its optional and lazy wrappers (a table's schema is built on first use). */
function unwrapped(node: z.ZodType): z.ZodType {
  while (node instanceof z.ZodOptional || node instanceof z.ZodLazy) {
    node = node.unwrap() as z.ZodType;
  }
  return node;
}

/** The schema node at `path`, unwrapping optionals, lazies and arrays; null when there is none. */
function schemaAt(path: Path): z.ZodType | null {
  let node: z.ZodType = PolicyFileSchema;
  for (const part of path) {
    node = unwrapped(node);
    if (typeof part === "number" && node instanceof z.ZodArray) node = node.element as z.ZodType;
    else if (typeof part === "string" && node instanceof z.ZodObject) {
      const child = (node.shape as Record<string, z.ZodType>)[part];
      if (child === undefined || !Object.hasOwn(node.shape, part)) return null;
      node = child;
    } else return null;
  }
  return unwrapped(node);
}

function placeName(path: Path): string {
  if (path.length === 0) return "at the top level";
  const last = path[path.length - 1];
  if (typeof last === "number") return `in a [[${keyPath(path.slice(0, -1))}]] entry`;
  return `in [${keyPath(path)}]`;
}

/**
 * Formats the first issue (unknown keys first: a misspelt table name explains
 * every later complaint).
 *
 * @param issues zod's issues for `raw`
 * @param raw the parsed TOML document
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[], raw: unknown): string {
  const issue = issues.find((i) => i.code === "unrecognized_keys") ?? issues[0];
  if (issue === undefined) return "The policy file is invalid.";
  if (issue.code === "unrecognized_keys") {
    const key = keyPath([...issue.path, issue.keys[0] ?? ""]);
    const schema = schemaAt(issue.path);
    const allowed = schema instanceof z.ZodObject ? Object.keys(schema.shape).join(", ") : "";
    return `Policy key "${key}" is not recognised; the keys allowed ${
      placeName(issue.path)
    } are: ${allowed}.`;
  }
  const key = keyPath(issue.path);
  const value = valueAt(raw, issue.path);
  if (value === undefined) return `Policy key "${key}" is missing; it ${issue.message}.`;
  return `Policy key "${key}" ${issue.message}, got ${describeValue(value)}.`;
}
