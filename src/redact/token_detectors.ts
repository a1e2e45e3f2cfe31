/**
 * Detectors for credentials with a fixed, documented prefix: cloud and SaaS
 * API keys, and JWTs.
 *
 * Every pattern is built to run in linear time on hostile output. Each starts
 * with a lookbehind that refuses a position preceded by a character of the
 * token's own alphabet, so only the first character of a run can start a
 * match; quantifiers are bounded or end the pattern. A line of a million
 * `eyJ`s or `A`s is therefore one attempt per run, not one per position.
 * A literal `indexOf` prefilter skips the regex entirely when its prefix is
 * absent, which is the common case.
 *
 * @module
 */
import type { Detector, Emit, ScanInput } from "./types.ts";

interface TokenSpec {
  readonly kind: string;
  /** The regex runs only when one of these occurs (case-sensitive). */
  readonly prefixes: readonly string[];
  readonly pattern: RegExp;
  /** Extra check on a match, to keep look-alike words out. */
  readonly accept?: (match: string) => boolean;
}

const HAS_DIGIT = /[0-9]/;
const HAS_UPPER = /[A-Z]/;
const HAS_LOWER = /[a-z]/;

/**
 * Real keys of these vendors are random base62: they contain digits and both
 * cases. Kebab-case words such as `sk-learn-...` do not.
 */
function looksRandom(match: string): boolean {
  return HAS_DIGIT.test(match) && HAS_UPPER.test(match) && HAS_LOWER.test(match);
}

/**
 * The specs, in priority order: when two findings overlap, the earlier kind
 * names the marker (`sk-ant-` is Anthropic before it is a generic `sk-`).
 */
const TOKEN_SPECS: readonly TokenSpec[] = [
  {
    // AWS IAM access key ids: 4-letter type prefix + 16 upper-case base32.
    kind: "aws_access_key_id",
    prefixes: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])/g,
  },
  {
    // GitHub: classic `gh?_` + 36 base62, fine-grained `github_pat_` + 82.
    kind: "github_token",
    prefixes: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})/g,
  },
  {
    kind: "gitlab_token",
    prefixes: ["glpat-"],
    pattern: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,255}/g,
  },
  {
    // Bot, user, app-level, refresh and config tokens.
    kind: "slack_token",
    prefixes: ["xox", "xapp-"],
    pattern: /(?<![A-Za-z0-9_-])(?:xox[abpers]-|xapp-)[A-Za-z0-9-]{10,255}/g,
  },
  {
    // Secret and restricted keys, live and test (`pk_` publishable keys are public).
    kind: "stripe_key",
    prefixes: ["k_live_", "k_test_"],
    pattern: /(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{16,255}/g,
  },
  {
    kind: "anthropic_key",
    prefixes: ["sk-ant-"],
    pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,1024}/g,
  },
  {
    // Legacy `sk-` + 48, project/service-account/admin keys `sk-proj-...`.
    kind: "openai_key",
    prefixes: ["sk-"],
    pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,1024}/g,
    accept: looksRandom,
  },
  {
    kind: "google_api_key",
    prefixes: ["AIza"],
    pattern: /(?<![A-Za-z0-9_-])AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g,
  },
  {
    kind: "npm_token",
    prefixes: ["npm_"],
    pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/g,
  },
  {
    // Macaroons: `pypi-` + base64url, well over 50 characters.
    kind: "pypi_token",
    prefixes: ["pypi-"],
    pattern: /(?<![A-Za-z0-9_-])pypi-[A-Za-z0-9_-]{50,4096}/g,
  },
  {
    // RFC 7519: header.payload.signature in base64url; a JSON header always
    // encodes to `eyJ`. The signature may be empty (`alg: none`) or cut off.
    kind: "jwt",
    prefixes: ["eyJ"],
    pattern: /(?<![A-Za-z0-9_.-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/g,
  },
  {
    // Azure Storage / Service Bus connection strings. The key is the value only.
    kind: "azure_account_key",
    prefixes: ["AccountKey=", "SharedAccessKey="],
    pattern: /(?<=(?:AccountKey|SharedAccessKey)=)[A-Za-z0-9+/]{20,1024}={0,2}/g,
  },
];

function firstIndexOf(text: string, prefixes: readonly string[]): number {
  let first = -1;
  for (const prefix of prefixes) {
    const at = text.indexOf(prefix);
    if (at !== -1 && (first === -1 || at < first)) first = at;
  }
  return first;
}

function tokenDetector(spec: TokenSpec): Detector {
  // A private copy: `lastIndex` is per-object state.
  const pattern = new RegExp(spec.pattern.source, "g");
  const accept = spec.accept;
  return {
    name: spec.kind,
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      const first = firstIndexOf(text, spec.prefixes);
      if (first === -1) return;
      // Lookbehinds still see the characters before `lastIndex`.
      pattern.lastIndex = Math.max(0, first - 1);
      for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
        if (accept === undefined || accept(m[0])) emit(m.index, m.index + m[0].length, spec.kind);
      }
    },
  };
}

/** @returns fresh detectors for every fixed-prefix credential, in priority order */
export function createTokenDetectors(): Detector[] {
  return TOKEN_SPECS.map(tokenDetector);
}
