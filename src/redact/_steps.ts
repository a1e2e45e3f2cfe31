/**
 * The redactor's findings as resumable steps, for the sliced (event-loop
 * friendly) entry points. Kept beside the public `Redactor` shape rather
 * than in it, so that the shape stays plain functions and a redactor made
 * elsewhere (a test double) still works: it is just redacted in one step.
 *
 * @module
 */
import type { DetectedSpan, Redactor } from "./types.ts";

/** Yields between slices of at most `sliceChars` characters; returns the findings. */
export type FindSpansSteps = (
  text: string,
  sliceChars: number,
) => Generator<void, readonly DetectedSpan[]>;

const STEPS = new WeakMap<Redactor, FindSpansSteps>();

/** Called by `createRedactor` for each redactor it makes. */
export function registerSteps(redactor: Redactor, steps: FindSpansSteps): void {
  STEPS.set(redactor, steps);
}

/** The steps of a redactor made by `createRedactor`, or null. */
export function stepsOf(redactor: Redactor): FindSpansSteps | null {
  return STEPS.get(redactor) ?? null;
}
