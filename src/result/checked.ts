/**
 * The value every loader step returns: the loader never throws for a bad
 * policy, it hands back one sentence naming the key.
 *
 * @module
 */

/** A step's result: the value, or the one-sentence startup error. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

/** Wraps a value as a successful step. */
export function pass<T>(value: T): Checked<T> {
  return { ok: true, value };
}

/** Wraps a startup error sentence. */
export function fail<T = never>(message: string): Checked<T> {
  return { ok: false, message };
}

/** Quotes a value for a message, cut short so a huge value cannot flood stderr. */
export function quote(value: string): string {
  const shown = value.length > 120 ? `${value.slice(0, 117)}...` : value;
  return JSON.stringify(shown);
}
