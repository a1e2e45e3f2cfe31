/**
 * Fetches from the external identity provider with bounds: a time limit, a
 * byte limit on the body, no redirects, and JSON only. A provider (or anyone
 * on the path to it) must not be able to hold a request open forever or fill
 * the server's memory with a never-ending JWKS.
 *
 * @module
 */
import { readWithin } from "../../streams/mod.ts";

/** Bounds of every provider fetch. */
export interface FetchBounds {
  /** The whole fetch, headers and body, must finish within this many milliseconds. */
  readonly timeoutMs: number;
  /** A body longer than this is refused (`too_large`) without being read further. */
  readonly maxBytes: number;
}

/** Discovery documents and key sets are a few KiB; 256 KiB is generous. */
export const DEFAULT_FETCH_BOUNDS: FetchBounds = Object.freeze({
  timeoutMs: 5000,
  maxBytes: 256 * 1024,
});

/** Why a bounded fetch failed (stable words: they go to the audit log). */
export type FetchFailure = "timeout" | "too_large" | "network" | "status" | "not_json";

/** A provider fetch that could not produce a JSON object. */
export class ProviderFetchError extends Error {
  /** Set so logs and `String(error)` name the class. */
  override readonly name = "ProviderFetchError";
  /** Which bound or check failed, for the audit log and health checks. */
  readonly kind: FetchFailure;
  /**
   * Records one failed fetch; `kind` defaults to `network` (no answer at all).
   *
   * @param message A sentence naming the URL and what went wrong.
   * @param kind Which bound or check failed.
   */
  constructor(message: string, kind: FetchFailure = "network") {
    super(message);
    this.kind = kind;
  }
}

/**
 * Fetches `url` and returns the raw response with its body read within the
 * bounds (so callers such as jose's remote key set can still look at the
 * status and headers).
 *
 * @throws {ProviderFetchError} on a timeout, an oversized body or a network error
 */
export async function boundedFetch(
  url: string,
  init: RequestInit,
  bounds: FetchBounds,
): Promise<Response> {
  const timeout = AbortSignal.timeout(bounds.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  let response: Response;
  try {
    // A redirect could lead the key fetch to a host the operator never named.
    response = await fetch(url, { ...init, redirect: "manual", signal });
  } catch (error) {
    throw new ProviderFetchError(
      `${url}: ${error instanceof Error ? error.message : error}`,
      timeout.aborted ? "timeout" : "network",
    );
  }
  const length = response.headers.get("content-length");
  if (length !== null && /^\d+$/.test(length) && Number(length) > bounds.maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new ProviderFetchError(
      `${url}: the body is larger than ${bounds.maxBytes} bytes.`,
      "too_large",
    );
  }
  let read: Awaited<ReturnType<typeof readWithin>>;
  try {
    read = await readWithin(response.body, bounds.maxBytes);
  } catch (error) {
    throw new ProviderFetchError(
      `${url}: ${error instanceof Error ? error.message : error}`,
      timeout.aborted ? "timeout" : "network",
    );
  }
  if (!read.ok) {
    throw new ProviderFetchError(
      `${url}: the body is larger than ${bounds.maxBytes} bytes.`,
      "too_large",
    );
  }
  return new Response(read.bytes as Uint8Array<ArrayBuffer>, {
    status: response.status,
    headers: response.headers,
  });
}

/**
 * Fetches a JSON object with `boundedFetch`; anything but 200 and an object
 * is an error.
 *
 * @param url Where to fetch from (the provider's discovery document or keys).
 * @param init The request (headers); redirects are refused whatever it says.
 * @param bounds The time and size limits.
 * @returns The parsed object.
 * @throws ProviderFetchError with its `kind` when the fetch fails or the body is no JSON object.
 */
export async function fetchJsonObject(
  url: string,
  init: RequestInit,
  bounds: FetchBounds,
): Promise<Record<string, unknown>> {
  const response = await boundedFetch(url, init, bounds);
  if (response.status !== 200) {
    throw new ProviderFetchError(`${url}: HTTP status ${response.status}.`, "status");
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new ProviderFetchError(`${url}: the body is not JSON.`, "not_json");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ProviderFetchError(`${url}: the body is not a JSON object.`, "not_json");
  }
  return body as Record<string, unknown>;
}
