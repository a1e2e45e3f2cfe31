/**
 * Value types of the jail.
 *
 * @module
 */

/** The codes the jail refuses with. */
export type JailRefusalCode = "CWD_ESCAPE" | "PATH_ESCAPE";

/** A containment verdict: the value on success, a code and sentence otherwise. */
export type JailResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: JailRefusalCode; readonly reason: string };
