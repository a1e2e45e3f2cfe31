/**
 * A loopback OTLP/HTTP receiver for tests: a plain `Deno.serve` on
 * 127.0.0.1 that keeps every JSON body POSTed to `/v1/traces` and
 * `/v1/metrics`, and helpers to read spans and metric points out of them.
 */

export interface OtlpAttribute {
  readonly key: string;
  readonly value: Record<string, unknown>;
}

export interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: readonly OtlpAttribute[];
  readonly status?: { readonly code?: number; readonly message?: string };
}

export interface OtlpPoint {
  readonly metric: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly value: number;
}

export interface OtlpReceiver {
  readonly endpoint: string;
  /** Every body received, as text, in order. */
  bodies(): readonly { path: string; contentType: string | null; text: string }[];
  spans(): OtlpSpan[];
  /** Data points of sums and gauges (value), and of histograms (count). */
  points(): OtlpPoint[];
  /** Waits until `ready()` holds, at most `ms`; throws with `what` otherwise. */
  until(ready: () => boolean, what: string, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the receiver on an ephemeral loopback port. */
export function startOtlpReceiver(): OtlpReceiver {
  const received: { path: string; contentType: string | null; text: string }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    received.push({
      path: new URL(request.url).pathname,
      contentType: request.headers.get("content-type"),
      text: await request.text(),
    });
    return new Response("{}", { headers: { "content-type": "application/json" } });
  });
  const endpoint = `http://127.0.0.1:${server.addr.port}`;
  const jsonOf = (path: string) =>
    received.filter((body) => body.path === path).map((body) =>
      JSON.parse(body.text) as Record<string, unknown>
    );
  return {
    endpoint,
    bodies: () => received,
    spans() {
      return jsonOf("/v1/traces").flatMap((body) =>
        list(body.resourceSpans).flatMap((resource) =>
          list(resource.scopeSpans).flatMap((scope) => list(scope.spans) as unknown as OtlpSpan[])
        )
      );
    },
    points() {
      const points: OtlpPoint[] = [];
      for (const body of jsonOf("/v1/metrics")) {
        for (const resource of list(body.resourceMetrics)) {
          for (const scope of list(resource.scopeMetrics)) {
            for (const metric of list(scope.metrics)) {
              const name = String(metric.name);
              const data = (metric.sum ?? metric.gauge ?? metric.histogram) as
                | Record<string, unknown>
                | undefined;
              for (const point of list(data?.dataPoints)) {
                points.push({
                  metric: name,
                  attributes: attributeMap(point.attributes as OtlpAttribute[]),
                  value: Number(point.asDouble ?? point.asInt ?? point.count ?? NaN),
                });
              }
            }
          }
        }
      }
      return points;
    },
    async until(ready, what, ms = 30_000) {
      const deadline = Date.now() + ms;
      while (!ready()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close: () => server.shutdown(),
  };
}

/** An OTLP attribute list as a plain object (`stringValue`, `intValue`, ... unwrapped). */
export function attributeMap(
  attributes: readonly OtlpAttribute[] | undefined,
): Record<string, unknown> {
  const map: Record<string, unknown> = {};
  for (const { key, value } of attributes ?? []) {
    const inner = value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue;
    map[key] = typeof inner === "string" && "intValue" in value ? Number(inner) : inner;
  }
  return map;
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value as Record<string, unknown>[] : [];
}
