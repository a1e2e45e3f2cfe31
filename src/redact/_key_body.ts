/**
 * Whether the key material of a PEM block reads as the start (and, for a
 * complete block, the whole) of a real private key. A block whose lines were
 * reordered (`grep -rn . | sort`, `sort` in a collating locale, `shuf`) can
 * still run from a BEGIN line to an END line while the lines between are the
 * wrong ones; then the key's other lines are elsewhere in the text.
 *
 * - PKCS#1, PKCS#8 and SEC1 keys are DER: a SEQUENCE (0x30, so the base64
 *   starts with `M`) whose length field gives the size of the whole key, so
 *   a complete block must hold exactly that many base64 characters.
 * - OpenSSH keys start with the base64 of `openssh-key-v1\0` (RFC-less, see
 *   OpenSSH's PROTOCOL.key).
 * - Encrypted PEM (RFC 1421 headers) and PGP blocks are not judged: their
 *   body starts with ciphertext or a packet of its own format.
 *
 * @module
 */

const OPENSSH_MAGIC = "b3BlbnNzaC1rZXktdjE";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Decodes up to the first 8 base64 characters of `head` into bytes. */
function decodeHead(head: string): number[] {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const c of head.slice(0, 8)) {
    const v = ALPHABET.indexOf(c);
    if (v === -1) break;
    value = (value << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((value >> bits) & 0xff);
    }
  }
  return bytes;
}

/** The base64 length of the DER value whose encoding starts with `head`, or -1. */
function derBase64Length(head: string): number {
  const b = decodeHead(head);
  if (b[0] !== 0x30 || b[1] === undefined) return -1;
  let length = b[1];
  let header = 2;
  if (length >= 0x80) {
    const n = length & 0x7f;
    if (n < 1 || n > 3 || b.length < 2 + n) return -1;
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + b[2 + i]!;
    header += n;
  }
  return Math.ceil((header + length) / 3) * 4;
}

/** What a block walk saw of one block's body. */
export interface KeyBody {
  /** The label between `BEGIN ` and the dashes. */
  readonly label: string;
  /** The first characters of the first base64 line. */
  readonly head: string;
  /** Base64 characters in the block (line breaks and blanks not counted). */
  readonly length: number;
  /** True when an END line closed the block. */
  readonly closed: boolean;
  /** True when the block had RFC 1421 headers (an encrypted PEM key). */
  readonly headers: boolean;
}

/** True when `body` can be a private key in order; false when its lines were moved. */
export function isPlausibleKeyBody(body: KeyBody): boolean {
  if (body.headers || body.label.includes("PGP")) return true;
  if (body.head.startsWith(OPENSSH_MAGIC.slice(0, Math.min(body.head.length, 19)))) {
    return body.head.length >= 4;
  }
  if (!body.head.startsWith("M")) return false;
  if (!body.closed) return true;
  const expected = derBase64Length(body.head);
  return expected === -1 || expected === body.length;
}
