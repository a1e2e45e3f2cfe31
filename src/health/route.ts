/**
 * `GET /healthz` (alive: the process answers HTTP) and `GET /readyz` (ready
 * for traffic: see `readiness.ts`). Both without authentication, because
 * the kubelet and load balancers ask them without credentials, and both
 * without the Host/Origin check, because a probe addresses the pod by its IP;
 * that is safe only because neither says anything but booleans and changes
 * nothing. `HEAD` is answered like `GET`, other methods get 405.
 *
 * @module
 */
import type { ReadinessReport } from "./readiness.ts";

/** The two paths the route answers; the transport handles every other path itself. */
export const HEALTH_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz"]);

const HEADERS = {
  "content-type": "application/json",
  // A cached "ok" would hide a replica that just became unready.
  "cache-control": "no-store",
};

/**
 * Answers a health path, or returns null for any other path.
 *
 * @param readiness The server's readiness probe.
 * @returns The route: a response for `/healthz` and `/readyz`, null for any other path.
 *
 * @example
 * ```ts
 * import { createHealthRoute } from "./route.ts";
 * const route = createHealthRoute(() => Promise.resolve({ ready: false, checks: { audit: false } }));
 * const response = await route(new Request("http://10.0.0.7:8080/readyz"), "/readyz");
 * response?.status; // 503: a load balancer stops sending traffic here
 * ```
 */
export function createHealthRoute(
  readiness: () => Promise<ReadinessReport>,
): (request: Request, path: string) => Promise<Response | null> {
  return async (request, path) => {
    if (!HEALTH_PATHS.has(path)) return null;
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response(null, { status: 405, headers: { allow: "GET, HEAD" } });
    }
    const body = (text: string) => request.method === "HEAD" ? null : text;
    if (path === "/healthz") {
      return new Response(body(JSON.stringify({ status: "ok" })), {
        status: 200,
        headers: HEADERS,
      });
    }
    const report = await readiness();
    return new Response(
      body(JSON.stringify({ status: report.ready ? "ready" : "not_ready", checks: report.checks })),
      { status: report.ready ? 200 : 503, headers: HEADERS },
    );
  };
}
