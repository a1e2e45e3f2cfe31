/**
 * Health endpoints for load balancers and Kubernetes: `/healthz` (alive) and
 * `/readyz` (ready for traffic), booleans only.
 *
 * @module
 */
export { createHealthRoute, HEALTH_PATHS } from "./route.ts";
export {
  createReadiness,
  READINESS_CACHE_MS,
  type ReadinessContext,
  type ReadinessOptions,
  type ReadinessReport,
} from "./readiness.ts";
export { jwksProbeFor } from "./jwks_probe.ts";
