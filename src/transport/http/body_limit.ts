/**
 * The request-size limit (`[http] max_http_request_bytes`), applied before
 * any route parses anything.
 *
 * Threat: a client that streams an endless or huge body to exhaust memory
 * before a parser or the authorization check ever sees it. Two gates:
 *
 * 1. A declared `Content-Length` above the limit is refused from the headers
 *    alone; not one byte of the body is read.
 * 2. A body without a length (chunked) or one that lies about it is counted
 *    as it streams and cut off as soon as the count passes the limit.
 *
 * Chunks pass through untouched, so an accepted body reaches the parser
 * byte-for-byte as sent (no decoding happens here: a multi-byte UTF-8
 * character split across two chunks is joined by the one decoder that reads
 * the whole body).
 *
 * @module
 */

/** The JSON body of every 413 answer: stable, so clients and tests can rely on it. */
export interface TooLargeBody {
  /** The one code of this refusal. */
  readonly error: "request_too_large";
  /** The byte limit the body passed, so a client can tell how much it may send. */
  readonly limit: number;
}

/** Counts the bytes of one request body as they pass. */
export interface BodyMeter {
  /** Bytes seen so far. */
  readonly observed: number;
  /** True once the body passed the limit; the stream was then errored. */
  readonly exceeded: boolean;
}

/** Raised inside the body stream when it passes the limit. */
export class RequestTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`The request body is larger than ${limit} bytes.`);
    this.name = "RequestTooLargeError";
  }
}

/**
 * The declared `Content-Length`, or null when absent. A malformed value (the
 * HTTP server normally refuses those itself) counts as infinitely large, so it
 * can never slip under the limit.
 */
export function declaredLength(request: Request): number | null {
  const header = request.headers.get("content-length");
  if (header === null) return null;
  const trimmed = header.trim();
  return /^\d+$/.test(trimmed) ? Number(trimmed) : Number.POSITIVE_INFINITY;
}

/** True when the declared length alone already breaks the limit (0 = no limit). */
export function declaredTooLarge(request: Request, limit: number): boolean {
  if (limit === 0) return false;
  const declared = declaredLength(request);
  return declared !== null && declared > limit;
}

/**
 * Wraps `body` so that it errors with {@linkcode RequestTooLargeError} once
 * more than `limit` bytes have passed (0 = count only).
 *
 * @returns The limited stream and its meter.
 */
export function meterBody(
  body: ReadableStream<Uint8Array>,
  limit: number,
): { stream: ReadableStream<Uint8Array>; meter: BodyMeter } {
  const meter = { observed: 0, exceeded: false };
  const stream = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        meter.observed += chunk.byteLength;
        if (limit !== 0 && meter.observed > limit) {
          meter.exceeded = true;
          // Erroring the stream also cancels the source, so the rest of the
          // upload is never buffered.
          controller.error(new RequestTooLargeError(limit));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return { stream, meter };
}

/**
 * A copy of `request` whose body is metered under `limit`. Requests without a
 * body are returned with a zero meter.
 */
export function limitRequest(
  request: Request,
  limit: number,
): { request: Request; meter: BodyMeter } {
  if (request.body === null) return { request, meter: { observed: 0, exceeded: false } };
  const { stream, meter } = meterBody(request.body, limit);
  const limited = new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: stream,
  });
  return { request: limited, meter };
}

/** Reads a whole body under `limit` (0 = no limit); see `src/streams/`. */
export {
  readWithin as readBodyWithin,
  type ReadWithinResult as ReadBodyResult,
} from "../../streams/mod.ts";

/** The 413 answer, identical on every route. */
export function tooLargeResponse(limit: number): Response {
  const body: TooLargeBody = { error: "request_too_large", limit };
  return new Response(JSON.stringify(body), {
    status: 413,
    headers: { "content-type": "application/json", "connection": "close" },
  });
}
