/**
 * `[guards] disable`: names of built-in escape-hatch guards to switch off.
 * A misspelt name must not leave the operator believing a guard is off (or
 * on), so an unknown name is a startup error with the closest real name.
 *
 * @module
 */
import { GUARD_NAMES } from "../policy/guards.ts";
import { type Checked, fail, pass, quote } from "./_checked.ts";

/**
 * Checks and de-duplicates the names.
 *
 * @returns the names, or a sentence naming `guards.disable[n]`
 */
export function checkDisabledGuards(names: readonly string[]): Checked<string[]> {
  const out: string[] = [];
  for (const [index, name] of names.entries()) {
    if (!GUARD_NAMES.has(name)) {
      const near = closest(name);
      const hint = near === null
        ? "docs/policy-reference.md lists them"
        : `did you mean ${quote(near)}?`;
      return fail(
        `Policy key "guards.disable[${index + 1}]" is ${
          quote(name)
        }, which is not a built-in guard name (${hint}).`,
      );
    }
    if (!out.includes(name)) out.push(name);
  }
  return pass(out);
}

/** The guard name within edit distance 3 of `name`, or null. */
function closest(name: string): string | null {
  let best: string | null = null;
  let bestDistance = 4;
  for (const candidate of GUARD_NAMES) {
    const distance = editDistance(name.toLowerCase(), candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Infinity;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? Infinity;
}
