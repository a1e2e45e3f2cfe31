/**
 * Kind and id names, the same on every backend: one plain file name, one
 * short text key. Checked before any I/O.
 *
 * @module
 */

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** True when `name` can be a kind or a record id. */
export function isRecordName(name: string): boolean {
  return NAME.test(name);
}

/**
 * Throws on a bad name: a caller bug, not input to judge (ids that reach a
 * store were checked or generated).
 */
export function requireName(what: string, name: string): string {
  if (!isRecordName(name)) throw new RangeError(`Invalid record ${what} "${name}".`);
  return name;
}

/** Throws unless `value` is a JSON object (records are objects on every backend). */
export function requireObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError("A state record must be a JSON object.");
  }
  return value as Record<string, unknown>;
}
