/**
 * The process environment as a read-only record that reads each name only when
 * asked. Under the generated Deno permissions the server may read just the
 * `HTMCP_*` names and `[env] pass` names; `Deno.env.toObject()` would need all
 * of them, so it is never called. A name outside the grant reads as unset.
 *
 * @module
 */

function read(name: string | symbol): string | undefined {
  if (typeof name !== "string") return undefined;
  try {
    return Deno.env.get(name);
  } catch {
    // NotCapable: this name is outside the granted env set, so it is unset
    // for us, exactly as it will be for the children.
    return undefined;
  }
}

/**
 * A lazily-read view of the environment. It answers `env[name]`, `name in env`
 * and `Object.hasOwn(env, name)` (the loader reads own properties only, so an
 * inherited `constructor` can never pose as a variable). Writes are ignored.
 */
export function processEnv(): Readonly<Record<string, string | undefined>> {
  // The target stays empty and extensible: the traps below report variables
  // as configurable own properties, which the Proxy invariants allow only on
  // an extensible target.
  const target = Object.create(null) as Record<string, string | undefined>;
  return new Proxy(target, {
    get: (_target, name) => read(name),
    has: (_target, name) => read(name) !== undefined,
    getOwnPropertyDescriptor(_target, name) {
      const value = read(name);
      if (value === undefined) return undefined;
      return { value, writable: false, enumerable: true, configurable: true };
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}
