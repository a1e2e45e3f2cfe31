/**
 * The resource-side bearer check, shared by the built-in authorization
 * server and the external-provider mode: extract the token, verify it with
 * the mode's own verifier, and turn a failure into its one refusal (audited,
 * except a request with no token at all, which is how every client discovers
 * the server).
 *
 * @module
 */
import type { AuditSink } from "../audit_sink.ts";
import { DEFAULT_SCOPES, type Scope } from "../scopes.ts";
import { bearerRefusal } from "./challenge.ts";
import { extractBearerToken } from "./extract.ts";
import type { BearerFailureReason, VerifyResult } from "./verify.ts";

/** What the check answers: the caller's identity, or the response to send as is. */
export type BearerCheck =
  | {
    readonly ok: true;
    readonly clientId: string;
    readonly scopes: ReadonlySet<Scope>;
    readonly jti: string;
    readonly expiresAt: number;
  }
  | { readonly ok: false; readonly reason: BearerFailureReason; readonly response: Response };

/**
 * Builds the bearer check of one server.
 *
 * @param audit Where refusals are recorded.
 * @param metadataUrl The protected-resource metadata URL named in challenges.
 * @param verify The mode's token verifier.
 * @returns `check(request, info)`.
 */
export function bearerChecker(
  audit: AuditSink,
  metadataUrl: string,
  verify: (token: string) => Promise<VerifyResult>,
  challenge: readonly Scope[] = DEFAULT_SCOPES,
): (request: Request, info?: { remoteAddr: string }) => Promise<BearerCheck> {
  const refuse = async (
    reason: BearerFailureReason,
    clientId: string | null,
    info: { remoteAddr: string } | undefined,
  ): Promise<BearerCheck> => {
    // A request without any token is how every client discovers us: not an incident.
    if (reason !== "missing_token") {
      await audit.writeEvent("bearer_invalid", {
        reason,
        client_id: clientId,
        remote_addr: info?.remoteAddr ?? null,
      });
    }
    return { ok: false, reason, response: bearerRefusal(reason, metadataUrl, challenge) };
  };
  return async (request, info) => {
    const extracted = extractBearerToken(request);
    if (!extracted.ok) return await refuse(extracted.reason, null, info);
    const verified = await verify(extracted.token);
    if (!verified.ok) return await refuse(verified.reason, verified.clientId, info);
    const t = verified.token;
    return { ok: true, clientId: t.clientId, scopes: t.scopes, jti: t.jti, expiresAt: t.expiresAt };
  };
}
