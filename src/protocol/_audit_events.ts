/**
 * The audit event kinds of the 2026-07-28 era. Never a body, a token or a
 * request state: only what an operator needs to see what was refused and why.
 *
 * @module
 */

declare module "../audit/mod.ts" {
  interface AuditEventFields {
    /** A 2026-07-28 request the protocol checks refused before any handler ran. */
    protocol_refused: {
      readonly protocol_era: string;
      readonly transport: string;
      readonly client_id: string | null;
      /** The SDK's name of the failed check (`param-header-validation`, `envelope`...). */
      readonly check: string;
      readonly jsonrpc_code: number;
      /** The body's `method`, when it is a string. */
      readonly method: string | null;
      /** The `Mcp-Method` and `Mcp-Name` headers as sent (null when absent). */
      readonly mcp_method_header: string | null;
      readonly mcp_name_header: string | null;
    };
    /** A `requestState` that was forged, replayed, expired or bound to another call. */
    request_state_refused: {
      readonly protocol_era: string;
      readonly transport: string;
      readonly client_id: string | null;
      readonly tool: string;
      readonly reason: string;
    };
    /**
     * A retry with a valid approval state whose `inputResponses` held no
     * well-formed answer: refused with `-32602`, nothing ran.
     */
    input_response_refused: {
      readonly protocol_era: string;
      readonly transport: string;
      readonly client_id: string | null;
      readonly tool: string;
      readonly approval_id: string;
      readonly reason: string;
    };
  }
}

export {};
