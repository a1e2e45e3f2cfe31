/**
 * The loader's step result, `Checked`, as config's modules name it: it lives
 * below every layer (`src/result/checked.ts`) so the state backend's URL
 * parser returns the same shape.
 *
 * @module
 */
export { type Checked, fail, pass, quote } from "../result/checked.ts";
