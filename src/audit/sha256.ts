/**
 * SHA-256 (FIPS 180-4) over bytes, synchronous, in plain TypeScript: the
 * audit chain's hash.
 *
 * Why not `node:crypto`: importing it makes Deno load and run its Node
 * compatibility layer (streams, errors, `util.inspect`, ...) before the
 * server's first line, which cost a cold start more than the rest of the
 * audit code together; and WebCrypto's digest is asynchronous (a trip
 * through the runtime's thread pool per record), while linking a batch
 * (`chain.ts`) is a pure synchronous function. The chain's hash is integrity,
 * not secrecy (every input is in the log itself), so a table-driven
 * implementation has no timing side channel worth defending.
 * `tests/audit/sha256_test.ts` holds it to the FIPS examples and to
 * `node:crypto` over every length from 0 to 300 bytes.
 *
 * @module
 */

/** The first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
const K = new Uint32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);

/** The first 32 bits of the fractional parts of the square roots of the first 8 primes. */
const H0 = [
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
] as const;

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/** The message schedule, reused: hashing is synchronous, so no two calls share it. */
const W = new Uint32Array(64);

/** One 64-byte block of `bytes` at `offset` folded into the state `h`. */
function compress(h: Uint32Array, bytes: Uint8Array, offset: number): void {
  for (let t = 0; t < 16; t++) {
    const i = offset + t * 4;
    W[t] = (bytes[i]! << 24) | (bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!;
  }
  for (let t = 16; t < 64; t++) {
    const w15 = W[t - 15]!;
    const w2 = W[t - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0;
  }
  let a = h[0]!, b = h[1]!, c = h[2]!, d = h[3]!, e = h[4]!, f = h[5]!, g = h[6]!, k = h[7]!;
  for (let t = 0; t < 64; t++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const choose = (e & f) ^ (~e & g);
    const t1 = (k + s1 + choose + K[t]! + W[t]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const majority = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (s0 + majority) | 0;
    k = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  h[0] = h[0]! + a;
  h[1] = h[1]! + b;
  h[2] = h[2]! + c;
  h[3] = h[3]! + d;
  h[4] = h[4]! + e;
  h[5] = h[5]! + f;
  h[6] = h[6]! + g;
  h[7] = h[7]! + k;
}

/**
 * An incremental SHA-256: `update` as often as needed, then `digestHex` once.
 *
 * @example
 * ```ts
 * import { Sha256 } from "./sha256.ts";
 * const hash = new Sha256();
 * hash.update(new TextEncoder().encode("a"));
 * hash.update(new TextEncoder().encode("bc"));
 * hash.digestHex(); // the SHA-256 of "abc"
 * ```
 */
export class Sha256 {
  readonly #state = new Uint32Array(H0);
  /** Bytes of an unfinished block, waiting for more. */
  readonly #block = new Uint8Array(64);
  #pending = 0;
  #length = 0;
  #done = false;

  /**
   * Adds `bytes` to the message.
   *
   * @param bytes The next bytes.
   * @returns This hash, for chaining.
   * @throws {TypeError} After `digestHex`.
   */
  update(bytes: Uint8Array): this {
    if (this.#done) throw new TypeError("This SHA-256 was already digested.");
    this.#length += bytes.length;
    let offset = 0;
    if (this.#pending > 0) {
      const take = Math.min(64 - this.#pending, bytes.length);
      this.#block.set(bytes.subarray(0, take), this.#pending);
      this.#pending += take;
      offset = take;
      if (this.#pending < 64) return this;
      compress(this.#state, this.#block, 0);
      this.#pending = 0;
    }
    for (; offset + 64 <= bytes.length; offset += 64) compress(this.#state, bytes, offset);
    this.#block.set(bytes.subarray(offset), 0);
    this.#pending = bytes.length - offset;
    return this;
  }

  /**
   * Ends the message.
   *
   * @returns Its SHA-256 as 64 lower-case hex digits.
   * @throws {TypeError} When called twice.
   */
  digestHex(): string {
    if (this.#done) throw new TypeError("This SHA-256 was already digested.");
    this.#done = true;
    // The padding: a 1 bit, zeros, and the message length in bits (big-endian,
    // 64 bits) ending a block; one block more when the length does not fit.
    const rest = this.#pending;
    const last = new Uint8Array(rest < 56 ? 64 : 128);
    last.set(this.#block.subarray(0, rest));
    last[rest] = 0x80;
    const bits = this.#length * 8;
    const view = new DataView(last.buffer);
    view.setUint32(last.length - 8, Math.floor(bits / 0x1_0000_0000));
    view.setUint32(last.length - 4, bits >>> 0);
    for (let offset = 0; offset < last.length; offset += 64) compress(this.#state, last, offset);
    let hex = "";
    for (const word of this.#state) {
      hex += HEX[word >>> 24]! + HEX[(word >>> 16) & 0xff]! + HEX[(word >>> 8) & 0xff]! +
        HEX[word & 0xff]!;
    }
    return hex;
  }
}

/**
 * SHA-256 of `bytes` as lower-case hex.
 *
 * @param bytes Any bytes (at most 2^53 - 1 of them).
 * @returns 64 hex digits.
 * @example
 * ```ts
 * import { sha256Hex } from "./sha256.ts";
 * sha256Hex(new TextEncoder().encode("abc"));
 * // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * ```
 */
export function sha256Hex(bytes: Uint8Array): string {
  return new Sha256().update(bytes).digestHex();
}
