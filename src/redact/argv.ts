/**
 * Redaction of an argv for the audit log. Redacting each word alone would
 * miss `--password hunter2`, where the key and the secret are two words; this
 * hides the word after a flag that names a secret.
 *
 * @module
 */
import { MARKER_OPEN, redactionMarker } from "./_markers.ts";
import { isSecretKeyName } from "./secret_key_names.ts";
import type { Redactor } from "./types.ts";

/** `--password`, `-password`, `--api-key`: a flag word with no attached value. */
const FLAG_WORD = /^--?[A-Za-z][A-Za-z0-9_.-]{1,63}$/;

/**
 * Redacts an argv word by word, and hides the word after a flag that names a
 * secret (`--password hunter2`).
 *
 * @param redactor the server's redactor
 * @param argv the words as the policy judged them
 * @returns a new array: every word redacted, and the value word after a
 *   secret-naming flag replaced by `[REDACTED:secret_assignment]`
 *
 * @example
 * ```ts
 * import { createRedactor, redactArgv } from "./mod.ts";
 * const redactor = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
 * redactArgv(redactor, ["mysql", "--password", "hunter2"]);
 * // ["mysql", "--password", "[REDACTED:secret_assignment]"]
 * ```
 */
export function redactArgv(redactor: Redactor, argv: readonly string[]): string[] {
  const out = argv.map((word) => redactor.redact(word));
  if (!redactor.enabled) return out;
  for (let i = 0; i + 1 < argv.length; i++) {
    const flag = argv[i]!;
    const value = argv[i + 1]!;
    if (!FLAG_WORD.test(flag) || !isSecretKeyName(flag)) continue;
    // `--password --verbose`: the next word is another flag, not the value.
    if (value.length === 0 || value.startsWith("-")) continue;
    out[i + 1] = redactionMarker("secret_assignment");
    i++;
  }
  return out;
}

/**
 * How many words of a redacted argv the redactor changed: what an operator
 * shown it (the approval page, `htmcp approvals list`) cannot see of what
 * would run. A word holding the marker's text of its own counts too, which
 * can only over-warn.
 *
 * @param argv An argv as `redactArgv` returned it.
 * @returns The number of words holding a redaction marker.
 */
export function hiddenWordCount(argv: readonly string[]): number {
  return argv.filter((word) => word.includes(MARKER_OPEN)).length;
}
