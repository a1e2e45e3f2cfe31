/**
 * PEM syntax (RFC 7468, RFC 1421) shared by the block detector and the
 * reordered-lines detector.
 *
 * @module
 */

/** Label text such as `RSA PRIVATE KEY`, `OPENSSH PRIVATE KEY`, `PGP PRIVATE KEY BLOCK`. */
export const PRIVATE_LABEL = /^[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?$/;
/** RFC 1421 headers of encrypted PEM: `Proc-Type: 4,ENCRYPTED`, `DEK-Info: AES-128-CBC,IV`. */
export const HEADER_LINE = /^[A-Za-z][A-Za-z-]{0,30}: ?[A-Za-z0-9,-]{0,80}$/;
/** Longest `Name: value` header line accepted inside a block. */
export const MAX_HEADER = 120;
/** Longest label accepted between `BEGIN ` and `-----`. */
export const MAX_LABEL = 64;
