/**
 * Redaction of large output in bounded slices, so that one big output does
 * not hold the event loop: the server keeps answering other clients, timers
 * fire and cancellations arrive while a multi-megabyte output is redacted.
 *
 * The main detectors read at most `sliceChars` characters of each view per
 * step (see `_windows.ts` for how findings that straddle a slice are kept
 * whole); between steps the call waits for one macrotask, so every pending
 * timer, I/O completion and request gets its turn. The cheap linear passes
 * (escape-free views, the key-line analysis, the final merge) still run in
 * one piece. Building the redacted text is stepped the same way. The result
 * is the same as the synchronous functions'.
 *
 * @module
 */
import { nextTask } from "../concurrency/mod.ts";
import { applySpansSteps } from "./_apply.ts";
import { stepsOf } from "./_steps.ts";
import { checkLimit, type TruncatedRedaction, truncateRedacted } from "./truncate.ts";
import type { RedactionResult, Redactor } from "./types.ts";

/**
 * Characters read per step: 64 Ki. Dense worst-case output costs about
 * 0.3 ms per KiB, so one step holds the event loop for some 20 ms at most.
 */
export const REDACTION_SLICE_CHARS = 64 * 1024;

/** Tuning for the sliced functions. */
export interface SliceOptions {
  /** Characters read per step (default `REDACTION_SLICE_CHARS`). */
  readonly sliceChars?: number;
}

/**
 * Like `redactor.redactWithSpans(text)`, one slice per macrotask.
 *
 * @param redactor the server's redactor (one from `createRedactor`; any
 *   other is called synchronously, in one step)
 * @param text the output to redact
 * @param options `sliceChars`: characters read per step
 * @returns the redacted text and its markers, as `redactWithSpans` returns them
 * @throws {RangeError} when `sliceChars` is not a positive integer
 *
 * @example
 * ```ts
 * import { createRedactor, redactInSlices } from "./mod.ts";
 * const redactor = createRedactor({ enabled: true, entropyFallback: false, extraPatterns: [] });
 * const { text } = await redactInSlices(redactor, "token=ghp_0123456789abcdefghijABCDEFGHIJ012345");
 * // text === "token=[REDACTED:github_token]"
 * ```
 */
export async function redactInSlices(
  redactor: Redactor,
  text: string,
  options: SliceOptions = {},
): Promise<RedactionResult> {
  const sliceChars = options.sliceChars ?? REDACTION_SLICE_CHARS;
  if (!Number.isSafeInteger(sliceChars) || sliceChars < 1) {
    throw new RangeError(`sliceChars must be a positive integer, got ${sliceChars}.`);
  }
  const steps = stepsOf(redactor);
  if (steps === null || text.length <= sliceChars) return redactor.redactWithSpans(text);
  const find = steps(text, sliceChars);
  for (let step = find.next();; step = find.next()) {
    if (step.done) {
      const apply = applySpansSteps(text, step.value, sliceChars);
      for (let applied = apply.next();; applied = apply.next()) {
        if (applied.done) return applied.value;
        await nextTask();
      }
    }
    await nextTask();
  }
}

/**
 * Like `redactAndTruncate`, with the redaction done by `redactInSlices`.
 *
 * @param redactor the server's redactor
 * @param text the captured window, decoded
 * @param limitBytes the output cap
 * @param windowWasCut true when the stream continued past the captured window
 * @param options `sliceChars`: characters read per step
 * @returns the text to show and its byte accounting
 * @throws {RangeError} when `limitBytes` is negative or not an integer
 */
export async function redactAndTruncateInSlices(
  redactor: Redactor,
  text: string,
  limitBytes: number,
  windowWasCut: boolean,
  options: SliceOptions = {},
): Promise<TruncatedRedaction> {
  checkLimit(limitBytes);
  const redaction = await redactInSlices(redactor, text, options);
  return truncateRedacted(text, redaction, limitBytes, windowWasCut);
}
