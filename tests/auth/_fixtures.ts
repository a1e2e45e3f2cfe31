/**
 * Test fixtures for the authorization server: a real state directory and a
 * real audit log in a temp folder, a controllable clock, and the steps of the
 * OAuth flow as a client performs them (register, authorize, approve, token),
 * all through `auth.handle()`.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { AuditLog } from "../../src/audit/mod.ts";
import { type AuthorizationServer, createAuthorizationServer } from "../../src/auth/mod.ts";
import type { FailureLimits } from "../../src/auth/server/mod.ts";
import type { Policy } from "../../src/config/types.ts";
import { makePolicy } from "../_helpers/policy.ts";

export const BASE = "http://127.0.0.1:8931";
export const RESOURCE = `${BASE}/mcp`;
export const PIN = "plum-7-harbor";
export const REDIRECT = "http://127.0.0.1:45123/callback";
export const INFO = { remoteAddr: "127.0.0.1" };

/** One authorization server over a fresh temp folder. */
export interface AuthFixture {
  readonly auth: AuthorizationServer;
  readonly dir: string;
  readonly stateDir: string;
  readonly auditPath: string;
  readonly log: AuditLog;
  readonly policy: Policy;
  /** Moves the fixture's clock forward. */
  advance(ms: number): void;
  /** Audit events written so far (the `event` records, parsed). */
  events(): Promise<Record<string, unknown>[]>;
  /** The lines the server printed for the operator (stderr in production). */
  readonly operatorLines: readonly string[];
  close(): Promise<void>;
}

export interface FixtureOptions {
  readonly adminPin?: string | null;
  readonly baseUrl?: string;
  readonly policyOverrides?: Partial<Policy>;
  readonly pinLimits?: FailureLimits;
  /** Reuse an existing folder (a second server on the same state). */
  readonly dir?: string;
}

/** Creates a server; throws if it cannot start (a fixture bug). */
export async function makeAuth(options: FixtureOptions = {}): Promise<AuthFixture> {
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "htmcp-auth-" });
  const jail = join(dir, "jail");
  await Deno.mkdir(jail, { recursive: true });
  const stateDir = join(dir, "state");
  const auditPath = join(dir, options.dir === undefined ? "audit.jsonl" : "audit2.jsonl");
  const policy = makePolicy({
    jailRoot: jail,
    auditLog: auditPath,
    overrides: { stateDir, ...options.policyOverrides },
  });
  const opened = await AuditLog.open(auditPath, "closed", { redact: (s) => s });
  if (!opened.ok) throw new Error(opened.reason);
  const log = opened.log;
  let clock = Date.UTC(2026, 0, 15, 12, 0, 0);
  const operatorLines: string[] = [];
  const created = await createAuthorizationServer({
    policy,
    baseUrl: options.baseUrl ?? BASE,
    audit: log,
    stateDir,
    adminPin: options.adminPin === undefined ? PIN : options.adminPin,
    now: () => clock,
    operatorLog: (line) => operatorLines.push(line),
    ...(options.pinLimits !== undefined ? { pinLimits: options.pinLimits } : {}),
  });
  if (!created.ok) {
    await log.close();
    throw new Error(created.message);
  }
  return {
    auth: created.auth,
    dir,
    stateDir,
    auditPath,
    log,
    policy,
    operatorLines,
    advance(ms: number) {
      clock += ms;
    },
    async events() {
      const text = await Deno.readTextFile(auditPath);
      return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
        .filter((r) => r.kind === "event");
    },
    async close() {
      await log.close();
      if (options.dir === undefined) await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Runs `fn` with a fixture and always cleans up. */
export async function withAuth(
  options: FixtureOptions,
  fn: (f: AuthFixture) => Promise<void>,
): Promise<void> {
  const fixture = await makeAuth(options);
  try {
    await fn(fixture);
  } finally {
    await fixture.close();
  }
}

/** Calls `auth.handle` and insists the route exists. */
export async function call(
  auth: AuthorizationServer,
  request: Request,
  info = INFO,
): Promise<Response> {
  const response = await auth.handle(request, info);
  if (response === null) throw new Error(`No route for ${request.method} ${request.url}`);
  return response;
}

/** POSTs JSON to /register. */
export function registerRequest(body: unknown): Request {
  return new Request(`${BASE}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Registers a client and returns its id. */
export async function register(
  auth: AuthorizationServer,
  metadata: Record<string, unknown> = {},
): Promise<string> {
  const response = await call(
    auth,
    registerRequest({
      client_name: "Test Client",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      ...metadata,
    }),
  );
  if (response.status !== 201) {
    throw new Error(`register: ${response.status} ${await response.text()}`);
  }
  return (await response.json()).client_id;
}

/** A PKCE verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
    .replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  return { verifier, challenge };
}

/** The parameters of a valid authorization request, with overrides (null removes one). */
export function authorizeParams(
  clientId: string,
  challenge: string,
  overrides: Record<string, string | null> = {},
): URLSearchParams {
  const params: Record<string, string | null> = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "st-123",
    resource: RESOURCE,
    scope: "shell:read shell:execute",
    ...overrides,
  };
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null) search.set(k, v);
  return search;
}

/** GETs /authorize. */
export function authorizeGet(
  auth: AuthorizationServer,
  search: URLSearchParams,
): Promise<Response> {
  return call(auth, new Request(`${BASE}/authorize?${search}`));
}

/** Extracts the hidden transaction id from an approval page. */
export function txnOf(html: string): string {
  const match = /name="txn" value="([^"]+)"/.exec(html);
  if (match === null) throw new Error("no txn field on the page");
  return match[1] as string;
}

/** The hidden fields of an approval page: the transaction id and its form token. */
export function formOf(html: string): { txn: string; csrf: string } {
  const csrf = /name="csrf" value="([^"]+)"/.exec(html);
  if (csrf === null) throw new Error("no csrf field on the page");
  return { txn: txnOf(html), csrf: csrf[1] as string };
}

/** POSTs the approval form. */
export function approvalPost(
  auth: AuthorizationServer,
  fields: Record<string, string>,
  info = INFO,
): Promise<Response> {
  return call(
    auth,
    new Request(`${BASE}/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: BASE },
      body: new URLSearchParams(fields).toString(),
    }),
    info,
  );
}

/** POSTs a token request. */
export function tokenPost(
  auth: AuthorizationServer,
  fields: Record<string, string>,
): Promise<Response> {
  return call(
    auth,
    new Request(`${BASE}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    }),
  );
}

/** Registers, authorizes and approves; returns the code and its verifier. */
export async function obtainCode(
  auth: AuthorizationServer,
  options: { clientId?: string; scope?: string } = {},
): Promise<{ clientId: string; code: string; verifier: string; location: URL }> {
  const clientId = options.clientId ?? await register(auth);
  const { verifier, challenge } = pkce();
  const page = await authorizeGet(
    auth,
    authorizeParams(
      clientId,
      challenge,
      options.scope !== undefined ? { scope: options.scope } : {},
    ),
  );
  if (page.status !== 200) throw new Error(`authorize: ${page.status} ${await page.text()}`);
  const approved = await approvalPost(auth, {
    ...formOf(await page.text()),
    pin: PIN,
    decision: "approve",
  });
  if (approved.status !== 303) {
    throw new Error(`approve: ${approved.status} ${await approved.text()}`);
  }
  const location = new URL(approved.headers.get("location") ?? "");
  const code = location.searchParams.get("code");
  if (code === null) throw new Error(`no code in ${location}`);
  return { clientId, code, verifier, location };
}

/** The whole flow: returns an access token. */
export async function obtainToken(
  auth: AuthorizationServer,
  options: { clientId?: string; scope?: string } = {},
): Promise<{ clientId: string; token: string; body: Record<string, unknown> }> {
  const { clientId, code, verifier } = await obtainCode(auth, options);
  const response = await tokenPost(auth, {
    grant_type: "authorization_code",
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: REDIRECT,
    resource: RESOURCE,
  });
  const body = await response.json();
  if (response.status !== 200) throw new Error(`token: ${response.status} ${JSON.stringify(body)}`);
  return { clientId, token: body.access_token, body };
}

/** A request to the protected resource with an Authorization header. */
export function mcpRequest(authorization: string | null, query = ""): Request {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (authorization !== null) headers.authorization = authorization;
  return new Request(`${BASE}/mcp${query}`, { method: "POST", headers, body: "{}" });
}
