/**
 * Turns captured bytes into the text a model sees: decode (invalid UTF-8
 * replaced, never thrown), redact, then truncate. Redaction runs on the cap
 * plus a lookahead, before the cut, so a secret straddling the cap is
 * replaced whole instead of being half-shown.
 *
 * @module
 */

import {
  redactAndTruncate,
  redactAndTruncateInSlices,
  REDACTION_LOOKAHEAD_BYTES,
  type Redactor,
  type TruncatedRedaction,
} from "../redact/mod.ts";

/**
 * Bytes kept beyond the cap so redaction sees a secret that starts before the
 * cap in full: the redaction module's lookahead, so both sides agree.
 */
export const OUTPUT_LOOKAHEAD_BYTES: number = REDACTION_LOOKAHEAD_BYTES;

/** The rendered output of one stream. */
export interface RenderedOutput {
  /** The redacted text, cut at the cap with a truncation marker appended when cut. */
  readonly text: string;
  /** True when the stream was longer than the cap and the text was cut. */
  readonly truncated: boolean;
}

/**
 * Decodes, redacts and caps one stream with the server's `Redactor`: the cut
 * is placed through the redaction spans (`redactAndTruncate`), so no marker
 * is split and no part of a secret straddling the cap appears.
 *
 * @param kept The leading bytes kept by the capture (at most cap + lookahead).
 * @param totalBytes Every byte the stream produced.
 * @param capBytes `limits.maxOutputBytes`.
 * @param redactor The server's redactor.
 * @returns The text (with a marker when cut) and whether it was cut.
 *
 * @example
 * ```ts
 * import type { Redactor } from "../redact/mod.ts";
 * import { renderWithRedactor } from "./output.ts";
 * declare const redactor: Redactor;
 * const kept = new TextEncoder().encode("token=abc\n");
 * const out = renderWithRedactor(kept, kept.byteLength, 1024 * 1024, redactor);
 * out.truncated; // false: under the cap
 * ```
 */
export function renderWithRedactor(
  kept: Uint8Array,
  totalBytes: number,
  capBytes: number,
  redactor: Redactor,
): RenderedOutput {
  const decoded = new TextDecoder("utf-8", { fatal: false }).decode(kept);
  const windowWasCut = totalBytes > kept.byteLength;
  return rendered(
    redactAndTruncate(redactor, decoded, capBytes, windowWasCut),
    capBytes,
    totalBytes,
  );
}

/**
 * `renderWithRedactor` with the redaction run in slices that give the event
 * loop a turn between them (`redactAndTruncateInSlices`), so a large output
 * does not stall the server's other clients. Same result.
 */
export async function renderWithRedactorInSlices(
  kept: Uint8Array,
  totalBytes: number,
  capBytes: number,
  redactor: Redactor,
): Promise<RenderedOutput> {
  const decoded = new TextDecoder("utf-8", { fatal: false }).decode(kept);
  const windowWasCut = totalBytes > kept.byteLength;
  const result = await redactAndTruncateInSlices(redactor, decoded, capBytes, windowWasCut);
  return rendered(result, capBytes, totalBytes);
}

function rendered(
  result: TruncatedRedaction,
  capBytes: number,
  totalBytes: number,
): RenderedOutput {
  if (!result.truncated) return { text: result.text, truncated: false };
  const dropped = Math.max(0, totalBytes - result.sourceBytes);
  return { text: result.text + truncationMarker(capBytes, dropped, totalBytes), truncated: true };
}

/**
 * The line appended to a cut stream: says how much the model did not see.
 *
 * @param capBytes The cap the stream was cut at.
 * @param dropped Bytes of the stream not shown.
 * @param totalBytes Every byte the stream produced.
 * @returns The marker, starting with a newline.
 */
export function truncationMarker(capBytes: number, dropped: number, totalBytes: number): string {
  return `\n[htmcp: output truncated at ${capBytes} bytes; ${dropped} of ${totalBytes} bytes dropped]`;
}
