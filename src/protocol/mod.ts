/**
 * The MCP 2026-07-28 face of the server, beside the 2025 revisions the
 * transports serve themselves: one era per process (`createModernEra`), whose
 * SDK v2 server instances answer the same tools as `createMcpServer()` through
 * an in-process link, with sealed single-use request state (MRTR) and the
 * Tasks extension over the job store (`docs/protocol-eras.md`).
 *
 * This is the folder's only way in from the rest of `src/` (enforced by
 * `scripts/check_imports.ts`): the transports need the era, never its parts.
 *
 * @module
 */
export { createModernEra, MODERN_ERA, type ModernEra, type ModernEraDeps } from "./face.ts";
