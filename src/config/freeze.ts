/**
 * Deep freezing for the loaded policy. `Object.freeze` does not stop
 * `Map.prototype.set`, so the policy's lookup tables are subclasses whose
 * mutators throw: a bug that tries to widen the allowlist at runtime fails
 * loudly instead of succeeding.
 *
 * @module
 */

function frozenMutation(): never {
  throw new TypeError("The policy is frozen: its lookup tables cannot be changed.");
}

/** A `Map` that refuses `set`, `delete` and `clear` after construction. */
export class FrozenMap<K, V> extends Map<K, V> {
  constructor(entries: Iterable<readonly [K, V]>) {
    super();
    for (const [key, value] of entries) super.set(key, value);
    Object.freeze(this);
  }
  override set(_key: K, _value: V): this {
    return frozenMutation();
  }
  override delete(_key: K): boolean {
    return frozenMutation();
  }
  override clear(): void {
    frozenMutation();
  }
}

/** A `Set` that refuses `add`, `delete` and `clear` after construction. */
export class FrozenSet<T> extends Set<T> {
  constructor(values: Iterable<T>) {
    super();
    for (const value of values) super.add(value);
    Object.freeze(this);
  }
  override add(_value: T): this {
    return frozenMutation();
  }
  override delete(_value: T): boolean {
    return frozenMutation();
  }
  override clear(): void {
    frozenMutation();
  }
}

/**
 * Freezes `value` and everything reachable from it, including the values of
 * Maps and Sets. RegExp objects are left unfrozen on purpose: a global
 * RegExp writes `lastIndex` on every `replace`/`exec`, which throws on a
 * frozen one; the object holding the RegExp is frozen, so it cannot be swapped.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || value instanceof RegExp) return value;
  if (value instanceof Map) {
    for (const inner of value.values()) deepFreeze(inner);
  } else if (value instanceof Set) {
    for (const inner of value.values()) deepFreeze(inner);
  } else {
    for (const key of Reflect.ownKeys(value)) {
      deepFreeze((value as Record<PropertyKey, unknown>)[key]);
    }
  }
  return Object.freeze(value);
}
