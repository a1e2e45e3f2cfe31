/**
 * `POST /register` (RFC 7591 §3). The body is read under its own, small
 * limit (`max_registration_bytes`), counted as it streams.
 *
 * @module
 */
import {
  CORS,
  jsonResponse,
  mediaType,
  NO_STORE,
  oauthError,
  randomToken,
  readBodyLimited,
} from "../_http.ts";
import {
  MAX_PENDING_CLIENTS,
  PENDING_CLIENT_TTL_MS,
  type RequestInfo,
  type ServerDeps,
} from "./deps.ts";
import { checkRegistration, type RegisteredClient, registrationResponse } from "./registration.ts";

/** Handles a registration request. */
export async function handleRegister(
  deps: ServerDeps,
  request: Request,
  _info: RequestInfo,
): Promise<Response> {
  const limit = deps.settings.maxBodyBytes;
  const body = await readBodyLimited(request, limit);
  if (!body.ok) {
    await deps.audit.writeEvent("http_rejected", {
      method: request.method,
      path: "/register",
      declared_bytes: body.declared,
      observed_bytes: body.observed === 0 ? null : body.observed,
      limit,
      status: 413,
    });
    return jsonResponse(413, {
      error: "request_too_large",
      error_description: `The registration body exceeds ${limit} bytes.`,
    }, CORS);
  }
  if (mediaType(request) !== "application/json") {
    return oauthError(
      400,
      "invalid_client_metadata",
      "The registration body must be application/json.",
      CORS,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body.bytes));
  } catch {
    return oauthError(
      400,
      "invalid_client_metadata",
      "The registration body is not valid JSON.",
      CORS,
    );
  }
  const check = checkRegistration(parsed);
  if (!check.ok) return oauthError(400, check.error, check.description, CORS);

  const now = deps.now();
  const client: RegisteredClient = Object.freeze({
    client_id: `htmcp-${randomToken(16)}`,
    client_id_issued_at: Math.floor(now / 1000),
    ...check.metadata,
  });
  if (!deps.pending.set(client.client_id, client, now + PENDING_CLIENT_TTL_MS)) {
    return oauthError(
      503,
      "temporarily_unavailable",
      `${MAX_PENDING_CLIENTS} registrations are already waiting for approval; try again later.`,
      { ...CORS, "retry-after": "60" },
    );
  }
  await deps.audit.writeEvent("client_registered", {
    client_id: client.client_id,
    client_name: client.client_name ?? "",
    redirect_uris: client.redirect_uris,
  });
  return jsonResponse(201, registrationResponse(client), { ...NO_STORE, ...CORS });
}
