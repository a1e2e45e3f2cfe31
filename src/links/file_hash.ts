/**
 * The SHA-256 of a shared file's bytes, streamed at native speed (a link may
 * hold up to a gibibyte, beyond what a hash in TypeScript does in good time).
 *
 * `node:crypto` is imported on first use, not with the module: importing it
 * makes Deno load its Node compatibility layer, which would cost every server
 * start tens of milliseconds for a feature most never use, and a link is
 * made long after the start if ever.
 *
 * @module
 */

/** An incremental SHA-256. */
export interface FileHash {
  /** Adds the next bytes. */
  update(bytes: Uint8Array): void;
  /** The digest as lower-case hex; call once. */
  digestHex(): string;
}

/** A new, empty hash. */
export async function newFileHash(): Promise<FileHash> {
  const { createHash } = await import("node:crypto");
  const hash = createHash("sha256");
  return {
    update: (bytes) => void hash.update(bytes),
    digestHex: () => hash.digest("hex"),
  };
}
