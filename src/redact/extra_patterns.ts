/**
 * Operator patterns from `[redaction] extra_patterns`. The loader compiled and
 * vetted them at startup (`src/config/patterns.ts`); each match is replaced by
 * `[REDACTED:<name>]`. A pattern with a named group `secret` hides only that
 * group, so `(?:db_pass=)(?<secret>\S+)`-style patterns can keep their key.
 *
 * Their running time is the operator's responsibility: we cannot prove a
 * foreign regex linear. An empty match is stepped over so it cannot loop.
 *
 * @module
 */
import type { Detector, Emit, RedactionSettings, ScanInput } from "./types.ts";

const SECRET_GROUP = "(?<secret>";

type ExtraPattern = RedactionSettings["extraPatterns"][number];

function extraPatternDetector(pattern: ExtraPattern): Detector {
  const hasSecretGroup = pattern.regex.source.includes(SECRET_GROUP);
  let flags = pattern.regex.flags.replace(/[gy]/g, "") + "g";
  // `d` gives match indices, needed to locate the `secret` group.
  if (hasSecretGroup && !flags.includes("d")) flags += "d";
  // A private copy: `lastIndex` is per-object state.
  const regex = new RegExp(pattern.regex.source, flags);
  const unicode = flags.includes("u") || flags.includes("v");
  return {
    name: pattern.name,
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      regex.lastIndex = 0;
      for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
        if (m[0].length === 0) {
          const c = text.codePointAt(m.index) ?? 0;
          regex.lastIndex = m.index + (unicode && c > 0xffff ? 2 : 1);
          continue;
        }
        const span = hasSecretGroup ? m.indices?.groups?.["secret"] : undefined;
        if (span !== undefined) {
          if (span[1] > span[0]) emit(span[0], span[1], pattern.name);
        } else if (!hasSecretGroup || m.groups?.["secret"] === undefined) {
          emit(m.index, m.index + m[0].length, pattern.name);
        }
      }
    },
  };
}

/** @returns one detector per operator pattern, in policy order */
export function createExtraPatternDetectors(patterns: readonly ExtraPattern[]): Detector[] {
  return patterns.map(extraPatternDetector);
}
