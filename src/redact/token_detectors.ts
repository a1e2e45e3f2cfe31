/**
 * Credentials with a fixed, documented prefix: cloud and SaaS API keys, and
 * JWTs.
 *
 * One skip-scan finds every run of base64url characters at least
 * `MIN_TOKEN` long: it reads the character `MIN_TOKEN - 1` ahead and, when
 * that is not a token character, no such run can cover the window and it
 * jumps the whole window. Ordinary text is mostly read one character in
 * several. Each run's first characters pick the candidate specs, and a sticky
 * regex checks the exact shape at that one position. Tokens are therefore
 * recognised only at the start of a run, the boundary a lookbehind would
 * otherwise enforce; every pattern is linear, and hostile input (a megabyte
 * of `A`s or of `eyJ`) is one run, read once.
 *
 * @module
 */
import { BASE64URL, table } from "./_ascii.ts";
import type { Detector, Emit, ScanInput } from "./types.ts";

const DASH = 45;
const UNDERSCORE = 95;
const BACKSLASH = 92;
/** `\\n`, `\\r`, `\\t` escapes: the letter after the backslash is not part of a token. */
const ESCAPE_LETTER = table("nrt");

/** Shortest run examined; every supported token is at least this long. */
const MIN_TOKEN = 16;
/** Longest token any spec matches (PyPI: 5 + 4096), JWTs aside. */
const MAX_TOKEN = 4200;
/** Longest stretch re-scanned in isolation after a finding (room for a large JWT). */
const MAX_ISOLATED = 16 * 1024;

interface TokenSpec {
  readonly kind: string;
  /** The spec is tried only at runs starting with one of these. */
  readonly prefixes: readonly string[];
  /** Anchored at the run start (compiled sticky). */
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
 * The specs, in priority order: at one position the first that matches
 * names the marker (`sk-ant-` is Anthropic before it is a generic `sk-`).
 */
const TOKEN_SPECS: readonly TokenSpec[] = [
  {
    // AWS IAM access key ids: 4-letter type prefix + 16 upper-case base32.
    kind: "aws_access_key_id",
    prefixes: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
    pattern: /(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])/,
  },
  {
    // GitHub: classic `gh?_` + 36 base62, fine-grained `github_pat_` + 82.
    kind: "github_token",
    prefixes: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    pattern: /gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}/,
  },
  {
    kind: "gitlab_token",
    prefixes: ["glpat-"],
    pattern: /glpat-[A-Za-z0-9_-]{20,255}/,
  },
  {
    // Bot, user, app-level, refresh and config tokens.
    kind: "slack_token",
    prefixes: ["xoxa-", "xoxb-", "xoxp-", "xoxe-", "xoxr-", "xoxs-", "xapp-"],
    pattern: /(?:xox[abeprs]-|xapp-)[A-Za-z0-9-]{11,255}/,
  },
  {
    // Secret and restricted keys, live and test (`pk_` publishable keys are public).
    kind: "stripe_key",
    prefixes: ["sk_live_", "rk_live_", "sk_test_", "rk_test_"],
    pattern: /[sr]k_(?:live|test)_[A-Za-z0-9]{16,255}/,
  },
  {
    kind: "anthropic_key",
    prefixes: ["sk-ant-"],
    pattern: /sk-ant-[A-Za-z0-9_-]{20,1024}/,
    accept: looksRandom,
  },
  {
    // Legacy `sk-` + 48, project/service-account/admin keys `sk-proj-...`.
    kind: "openai_key",
    prefixes: ["sk-"],
    pattern: /sk-[A-Za-z0-9_-]{20,1024}/,
    accept: looksRandom,
  },
  {
    kind: "google_api_key",
    prefixes: ["AIza"],
    pattern: /AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/,
  },
  {
    kind: "npm_token",
    prefixes: ["npm_"],
    pattern: /npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])/,
  },
  {
    // Macaroons: `pypi-` + base64url, well over 50 characters.
    kind: "pypi_token",
    prefixes: ["pypi-"],
    pattern: /pypi-[A-Za-z0-9_-]{50,4096}/,
  },
  {
    // RFC 7519: header.payload.signature in base64url; a JSON header always
    // encodes to `eyJ`. The signature may be empty (`alg: none`) or cut off.
    kind: "jwt",
    prefixes: ["eyJ"],
    pattern: /eyJ[A-Za-z0-9_-]{13,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*/,
  },
];

/** Every kind this detector emits. */
export const TOKEN_KINDS: readonly string[] = TOKEN_SPECS.map((spec) => spec.kind);

interface CompiledSpec {
  readonly kind: string;
  readonly prefixes: readonly string[];
  readonly sticky: RegExp;
  readonly accept: ((match: string) => boolean) | undefined;
}

/** @returns the detector for every fixed-prefix credential */
export function createTokenDetector(): Detector {
  // Private sticky copies: `lastIndex` is per-object state.
  const specs: CompiledSpec[] = TOKEN_SPECS.map((spec) => ({
    kind: spec.kind,
    prefixes: spec.prefixes,
    sticky: new RegExp(spec.pattern.source, "y"),
    accept: spec.accept,
  }));
  // Specs by the first character of their prefixes: most runs start with a
  // character no prefix starts with and are dismissed with one lookup.
  const byFirst: (CompiledSpec[] | undefined)[] = new Array(256);
  for (const spec of specs) {
    for (const c of new Set(spec.prefixes.map((p) => p.charCodeAt(0)))) {
      (byFirst[c] ??= []).push(spec);
    }
  }

  /** Tries every candidate spec at `at`; returns the end of the match emitted, or -1. */
  const tryAt = (
    text: string,
    at: number,
    candidates: readonly CompiledSpec[],
    emit: Emit,
  ): number => {
    for (const spec of candidates) {
      let prefixed = false;
      for (const prefix of spec.prefixes) {
        if (text.startsWith(prefix, at)) {
          prefixed = true;
          break;
        }
      }
      if (!prefixed) continue;
      spec.sticky.lastIndex = at;
      const m = spec.sticky.exec(text);
      if (m === null || (spec.accept !== undefined && !spec.accept(m[0]))) continue;
      emit(at, at + m[0].length, spec.kind);
      return at + m[0].length;
    }
    return -1;
  };

  /** `at` moved past dashes and underscores, which no prefix starts with. */
  const skipJoiners = (bytes: Uint8Array, at: number, end: number): number => {
    while (at < end && (bytes[at] === DASH || bytes[at] === UNDERSCORE)) at++;
    return at;
  };

  /**
   * Tries the run `[start, end)`. A token glued to dashes
   * (`-----END ...-----ghp_...`), to a JSON escape (`\\nghp_...`) or to the
   * end of another token (`AKIA...--ghp_...`) is tried too: once the
   * neighbour is a marker, or the escape a real newline, it would start a
   * run, and redaction must not depend on what an earlier redaction left
   * beside a token (idempotence).
   */
  const tryRun = (
    text: string,
    bytes: Uint8Array,
    start: number,
    end: number,
    afterBackslash: boolean,
    emit: Emit,
  ) => {
    const direct = byFirst[bytes[start]!];
    let matched = direct === undefined ? -1 : tryAt(text, start, direct, emit);
    if (matched === -1) {
      let at = skipJoiners(bytes, start, end);
      if (at === start && afterBackslash && ESCAPE_LETTER[bytes[start]!] === 1) at = start + 1;
      if (at === start || end - at < MIN_TOKEN) return;
      const glued = byFirst[bytes[at]!];
      if (glued === undefined) return;
      matched = tryAt(text, at, glued, emit);
    }
    // A chain of glued tokens: each match's end is the next one's start.
    while (matched !== -1 && matched < end) {
      const at = skipJoiners(bytes, matched, end);
      const next = byFirst[bytes[at]!];
      if (end - at < MIN_TOKEN || next === undefined) return;
      matched = tryAt(text, at, next, emit);
    }
  };

  /**
   * Tries the run `[start, end)` as if nothing surrounded it: on a copy, so
   * that a pattern's lookahead sees the cut, as it will see a marker.
   */
  const isolated = (
    input: ScanInput,
    bytes: Uint8Array,
    start: number,
    end: number,
    emit: Emit,
  ) => {
    if (end - start < MIN_TOKEN) return;
    const shift = (s: number, e: number, kind: string) => emit(s + start, e + start, kind);
    const afterBackslash = start > 0 && bytes[start - 1] === BACKSLASH;
    const slice = input.text.slice(start, end);
    tryRun(slice, bytes.subarray(start, end), 0, end - start, afterBackslash, shift);
  };

  return {
    name: "tokens",
    scan(input: ScanInput, emit: Emit): void {
      const text = input.text;
      const bytes = input.bytes();
      const n = bytes.length;
      let p = 0;
      while (p + MIN_TOKEN <= n) {
        const probe = p + MIN_TOKEN - 1;
        if (BASE64URL[bytes[probe]!] === 0) {
          p = probe + 1;
          continue;
        }
        let start = probe;
        while (start > p && BASE64URL[bytes[start - 1]!] === 1) start--;
        let end = probe + 1;
        while (end < n && BASE64URL[bytes[end]!] === 1) end++;
        // A run that began before `p` was already judged (it ended at p - 1).
        if (end - start >= MIN_TOKEN) {
          tryRun(text, bytes, start, end, start > 0 && bytes[start - 1] === BACKSLASH, emit);
        }
        p = end + 1;
      }
    },
    scanFrom(input: ScanInput, at: number, limit: number, emit: Emit): void {
      const bytes = input.bytes();
      let first = at;
      while (first < limit && (bytes[first] === DASH || bytes[first] === UNDERSCORE)) first++;
      if (first >= limit || byFirst[bytes[first]!] === undefined) return;
      // Up to the next finding, not just this run: a JWT spans three runs.
      isolated(input, bytes, at, Math.min(limit, at + MAX_ISOLATED), emit);
    },
    scanTo(input: ScanInput, floor: number, at: number, emit: Emit): void {
      const bytes = input.bytes();
      let start = at;
      while (start > floor && at - start <= MAX_TOKEN && BASE64URL[bytes[start - 1]!] === 1) {
        start--;
      }
      isolated(input, bytes, start, at, emit);
    },
  };
}
