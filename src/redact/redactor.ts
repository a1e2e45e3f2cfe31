/**
 * `createRedactor`: runs every detector over the text, merges what they found
 * and replaces each merged span with `[REDACTED:<kind>]`.
 *
 * Overlapping findings merge into one span covering all of them, so a secret
 * two detectors saw differently is never half-shown; the marker names the
 * kind of the detector listed first (most specific). Redaction is idempotent,
 * `redact(redact(x)) === redact(x)`, so layers that each redact compose:
 * findings inside a marker already in the text are dropped, and the edges of
 * every finding are re-scanned as the word boundaries its marker will make.
 *
 * @module
 */
import { stripAnsi } from "./_ansi.ts";
import { hasPrivateKeyMarker, keyLineView, walkKeyBlocks } from "./_key_lines.ts";
import { type MatchView, sourceSpan } from "./_match_view.ts";
import { applySpans } from "./_apply.ts";
import { mergeSpans, type RankedSpan } from "./_merge.ts";
import { registerSteps } from "./_steps.ts";
import { detectInWindows } from "./_windows.ts";
import { createScanInput, ScratchBuffer } from "./_scan_input.ts";
import { createAssignmentDetector } from "./assignment_detector.ts";
import { createAuthorizationDetector } from "./authorization_detector.ts";
import { createEntropyDetector } from "./entropy_detector.ts";
import { createExtraPatternDetectors } from "./extra_patterns.ts";
import { createPemDetector } from "./pem_detector.ts";
import { createPemLinesDetector } from "./pem_lines_detector.ts";
import { createTokenDetector, TOKEN_KINDS } from "./token_detectors.ts";
import { createUrlCredentialsDetector } from "./url_credentials_detector.ts";
export type { RedactionSettings } from "./types.ts";
import type {
  DetectedSpan,
  Detector,
  Emit,
  RedactionResult,
  RedactionSettings,
  Redactor,
  ScanInput,
} from "./types.ts";

/**
 * Bound on the edge re-scans. A round only finds something when one
 * detector's finding exposes another detector's (chains within one detector,
 * such as tokens glued end to end, are followed by the detector itself);
 * deeper chains do not occur in real output, and the bound keeps hostile
 * input linear.
 */
const MAX_EDGE_ROUNDS = 4;

/** Every kind a built-in detector emits. */
const BUILT_IN_KINDS: readonly string[] = [
  "private_key",
  ...TOKEN_KINDS,
  "authorization",
  "url_credentials",
  "secret_assignment",
  "aws_secret_access_key",
  "azure_account_key",
  "high_entropy",
];

/** The detectors for `settings`, most specific first; order is the tie-break rank. */
function buildDetectors(settings: RedactionSettings): Detector[] {
  const detectors: Detector[] = [
    createPemDetector(),
    createTokenDetector(),
    createAuthorizationDetector(),
    createUrlCredentialsDetector(),
    ...createExtraPatternDetectors(settings.extraPatterns),
    createAssignmentDetector(),
  ];
  if (settings.entropyFallback) detectors.push(createEntropyDetector());
  return detectors;
}

/**
 * Merges the findings, then lets detectors look again at the edges of each
 * merged span until nothing new turns up.
 *
 * A finding becomes a marker, `[...]`: a word boundary on both sides that the
 * original text may not have had (`AKIA...--ghp_...`, `AIza...-----BEGIN`).
 * Detectors that match at word edges re-scan the stretch between two
 * findings as if it stood alone, so that a second redaction finds nothing the
 * first one missed. Each edge is scanned once per neighbour.
 */
function rescanEdges(
  input: ScanInput,
  found: RankedSpan[],
  detectors: readonly Detector[],
  emitters: readonly Emit[],
  kinds: ReadonlySet<string>,
): RankedSpan[] {
  const text = input.text;
  let merged = mergeSpans(found, text, kinds);
  const scannedAfter = new Map<number, number>();
  const scannedBefore = new Map<number, number>();
  for (let round = 0; round < MAX_EDGE_ROUNDS; round++) {
    const before = found.length;
    for (let i = 0; i < merged.length; i++) {
      const span = merged[i]!;
      const floor = merged[i - 1]?.end ?? 0;
      const limit = merged[i + 1]?.start ?? text.length;
      if (span.end < limit && scannedAfter.get(span.end) !== limit) {
        scannedAfter.set(span.end, limit);
        detectors.forEach((d, rank) => d.scanFrom?.(input, span.end, limit, emitters[rank]!));
      }
      if (floor < span.start && scannedBefore.get(span.start) !== floor) {
        scannedBefore.set(span.start, floor);
        detectors.forEach((d, rank) => d.scanTo?.(input, floor, span.start, emitters[rank]!));
      }
    }
    if (found.length === before) break;
    merged = mergeSpans(found, text, kinds);
  }
  return merged;
}

/**
 * Builds a redactor for the policy's `[redaction]` settings. Detectors and
 * their regexes are compiled once, here.
 *
 * @param settings `policy.redaction`
 * @returns a redactor whose functions can be passed around unbound
 *
 * @example
 * ```ts
 * import { createRedactor } from "./mod.ts";
 * const { redact } = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
 * redact("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE");
 * // "AWS_ACCESS_KEY_ID=[REDACTED:aws_access_key_id]"
 * ```
 */
export function createRedactor(settings: RedactionSettings): Redactor {
  const enabled = settings.enabled;
  const detectors = enabled ? buildDetectors(settings) : [];
  // The line view only matters to detectors that read key material line by
  // line; both emit `private_key`, the block detector's kind and rank (0).
  const keyDetectors: Detector[] = [createPemDetector(), createPemLinesDetector()];
  const scratch = new ScratchBuffer();
  const kinds: ReadonlySet<string> = new Set([
    ...BUILT_IN_KINDS,
    ...settings.extraPatterns.map((pattern) => pattern.name),
  ]);

  /** Every detector of `list` over `input`, merged; `rankOf(i)` ranks the i-th. */
  const detectIn = (
    input: ScanInput,
    list: readonly Detector[],
    rankOf: (index: number) => number,
  ): RankedSpan[] => {
    const found: RankedSpan[] = [];
    const emitters = list.map((_, index) => (start: number, end: number, kind: string) => {
      found.push({ start, end, kind, rank: rankOf(index) });
    });
    list.forEach((detector, index) => detector.scan(input, emitters[index]!));
    return rescanEdges(input, found, list, emitters, kinds);
  };
  // One scratch buffer serves every view: each input's byte view is built
  // and used before the next input is made.
  const scanInput = (text: string) => createScanInput(text, scratch, kinds);

  /** Adds the findings of a view to `found`, in source indices. */
  const addFromView = (found: RankedSpan[], view: MatchView | null, spans: RankedSpan[]) => {
    for (const span of spans) {
      found.push(view === null ? span : { ...span, ...sourceSpan(view, span.start, span.end) });
    }
  };

  /**
   * The findings for `text`, as steps: the main detectors read each view a
   * slice of at most `sliceChars` characters at a time and the generator
   * yields between slices (`sliced.ts` serves the event loop there; the
   * synchronous functions run it straight through with one slice). No scan
   * input outlives a step, so another call may use the scratch buffer
   * between steps.
   */
  function* findSpansSteps(
    text: string,
    sliceChars: number,
  ): Generator<void, readonly DetectedSpan[]> {
    if (!enabled || text.length === 0) return [];
    const all = (index: number) => index;
    const main = (viewText: string) =>
      detectInWindows(
        viewText,
        sliceChars,
        (window) => detectIn(scanInput(window), detectors, all),
      );
    // Match views: the text as printed hides secrets that its rendering
    // split (colour escapes) or prefixed line by line (`grep -r`, `cat -n`,
    // `diff`). Text with escapes is read in both escape-free views (the
    // spaced one sees what the printed text shows, minus the escapes'
    // letters glued to a token); each view only adds findings.
    const ansi = stripAnsi(text);
    let found: RankedSpan[];
    if (ansi === null) found = yield* main(text);
    else {
      found = [];
      addFromView(found, ansi.spaced, yield* main(ansi.spaced.text));
      addFromView(found, ansi.joined, yield* main(ansi.joined.text));
    }
    // Windows yield sorted findings that do not overlap (each starts where
    // the last kept one ended), so only views need a merge.
    let merge = ansi !== null;
    const plain = ansi?.joined ?? null;
    const plainText = plain?.text ?? text;
    if (hasPrivateKeyMarker(plainText)) {
      // Linear passes with a cheap detector pair, read whole: whether a key
      // block was broken up is a question about the whole text.
      const blocks = walkKeyBlocks(plainText);
      const lines = keyLineView(plainText, blocks, plain);
      // With nothing cut, the block detector has read this text already;
      // the lines detector only acts on broken-up blocks.
      if (lines !== null) {
        addFromView(found, lines, detectIn(scanInput(lines.text), keyDetectors, () => 0));
        merge = true;
      } else if (!blocks.wellFormed) {
        addFromView(found, plain, detectIn(scanInput(plainText), keyDetectors.slice(1), () => 0));
        merge = true;
      }
    }
    const merged = merge ? mergeSpans(found, text, kinds) : found;
    return merged.map(({ start, end, kind }) => ({ start, end, kind }));
  }

  const findSpans = (text: string): readonly DetectedSpan[] => {
    const steps = findSpansSteps(text, Infinity);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
    }
  };
  const redactWithSpans = (text: string): RedactionResult => applySpans(text, findSpans(text));
  const redact = (text: string): string => redactWithSpans(text).text;
  const redactor: Redactor = Object.freeze({ enabled, redact, redactWithSpans, findSpans });
  registerSteps(redactor, findSpansSteps);
  return redactor;
}
