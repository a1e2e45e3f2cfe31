/**
 * The process environment as a read-only record that reads each name only when
 * asked. Under the generated Deno permissions the server may read just the
 * `HTMCP_*` names and `[env] pass` names; `Deno.env.toObject()` would need all
 * of them, so it is never called. A name outside the grant reads as unset.
 *
 * @module
 */

/** A lazily-read view of the environment. */
export function processEnv(): Readonly<Record<string, string | undefined>> {
  return new Proxy(Object.freeze(Object.create(null)) as Record<string, string | undefined>, {
    get(_target, name) {
      if (typeof name !== "string") return undefined;
      try {
        return Deno.env.get(name);
      } catch {
        // NotCapable: this name is outside the granted env set, so it is unset
        // for us, exactly as it will be for the children.
        return undefined;
      }
    },
    has(_target, name) {
      if (typeof name !== "string") return false;
      try {
        return Deno.env.get(name) !== undefined;
      } catch {
        return false;
      }
    },
  });
}
