/**
 * The client's form elicitation as run_command's approval hook, in the
 * delivery each era has, asked with no fields at all (accept, decline or
 * cancel), so the answer carries nothing but the human's choice:
 *
 * - 2025: an `elicitation/create` request to the client, offered only when
 *   the client declared form elicitation at initialize;
 * - 2026-07-28: no server-to-client request exists; the question leaves as
 *   the call's result (the face turns it into `input_required`) and the
 *   answer arrives with the retried call, offered only when that request's
 *   own capabilities declare form elicitation.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { RunHooks } from "../tools/run_command.ts";
import {
  type ApprovalQuestion,
  QUESTION_META_KEY,
  readRoundTrip,
} from "../approvals/round_trip.ts";
import { MODERN_ERA } from "../tools/caller.ts";

/** The hooks of one call, and how its result carries a question out. */
export interface ClientQuestion {
  readonly hooks: Pick<RunHooks, "elicit" | "roundTrip">;
  /** `result`, with the question (if one was asked) in its `_meta`. */
  carry(result: CallToolResult): CallToolResult;
}

/**
 * The question channel of one run_command call.
 *
 * @param server The 2025-era server the call came through.
 * @param protocolEra The caller's era (`undefined` or `"2025"`: a handshake).
 * @param meta The call's `_meta` as the SDK passes it (`extra._meta`).
 */
export function clientQuestion(
  server: McpServer,
  protocolEra: string | undefined,
  meta: unknown,
  requestId?: RequestId,
): ClientQuestion {
  if (protocolEra !== MODERN_ERA) {
    // A 2025 client's `_meta` reaches this handler as sent: it is never read
    // for a round trip, so no client can hand itself an answer.
    return { hooks: elicitHook(server, protocolEra, requestId), carry: (result) => result };
  }
  const roundTrip = readRoundTrip(meta);
  if (roundTrip === null || (!roundTrip.form && roundTrip.answer === null)) {
    return { hooks: {}, carry: (result) => result };
  }
  let asked: ApprovalQuestion | null = null;
  return {
    hooks: {
      roundTrip: {
        answer: roundTrip.answer,
        ask: (question) => {
          asked = question;
        },
      },
    },
    carry: (result) =>
      asked === null
        ? result
        : { ...result, _meta: { ...result._meta, [QUESTION_META_KEY]: asked } },
  };
}

/**
 * `{ elicit }` when the connected 2025 client can answer a form
 * elicitation; `{}` otherwise (and for any other era).
 *
 * The question goes on the stream of the call it is about (`requestId`):
 * without it, the SDK sends it on the session's standalone GET stream,
 * which any token of the same client may hold, and a narrower token did,
 * reading the held command and keeping the question from the caller (red
 * team, round eight).
 */
export function elicitHook(
  server: McpServer,
  protocolEra?: string,
  requestId?: RequestId,
): Pick<RunHooks, "elicit"> {
  if (protocolEra !== undefined && protocolEra !== "2025") return {};
  const capabilities = server.server.getClientCapabilities();
  if (capabilities?.elicitation?.form === undefined) return {};
  return {
    elicit: async (message, timeoutMs, signal) => {
      try {
        const result = await server.server.elicitInput(
          { mode: "form", message, requestedSchema: { type: "object", properties: {} } },
          {
            timeout: timeoutMs,
            ...(signal === undefined ? {} : { signal }),
            ...(requestId === undefined ? {} : { relatedRequestId: requestId }),
          },
        );
        return result.action;
      } catch (error) {
        if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return "timeout";
        // A client that fails to answer has not approved anything.
        return "cancel";
      }
    },
  };
}
