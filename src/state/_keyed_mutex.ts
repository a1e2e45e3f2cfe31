/**
 * An in-process queue per key: `run(key, fn)` starts `fn` only after every
 * earlier `run` of the same key has settled.
 *
 * The PostgreSQL store puts its per-kind advisory locks behind this, so one
 * process waits for a kind's lock on at most one pooled connection: without
 * it, as many concurrent `withLock` calls as the pool has connections would
 * all sit waiting, and the holder's own reads would find no free connection.
 *
 * @module
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(fn, fn);
    const tail = result.then(() => {}, () => {});
    this.#tails.set(key, tail);
    try {
      return await result;
    } finally {
      // The last one out removes the key, so the map does not grow per kind forever.
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
