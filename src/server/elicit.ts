/**
 * The client's form elicitation as run_command's approval hook: offered only
 * when the client declared form elicitation at initialize, and then asked
 * with no fields at all (accept, decline or cancel), so the answer carries
 * nothing but the human's choice.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { RunHooks } from "../tools/run_command.ts";

/**
 * `{ elicit }` when the connected client can answer a form elicitation; `{}`
 * otherwise. A 2026-07-28 call has no server-to-client channel (the era
 * delivers such questions as multi round-trip results, not built for
 * approvals yet), so it takes the out-of-band path rather than a question
 * that would fail and read as a denial.
 */
export function elicitHook(server: McpServer, protocolEra?: string): Pick<RunHooks, "elicit"> {
  if (protocolEra !== undefined && protocolEra !== "2025") return {};
  const capabilities = server.server.getClientCapabilities();
  if (capabilities?.elicitation?.form === undefined) return {};
  return {
    elicit: async (message, timeoutMs, signal) => {
      try {
        const result = await server.server.elicitInput(
          { mode: "form", message, requestedSchema: { type: "object", properties: {} } },
          { timeout: timeoutMs, ...(signal === undefined ? {} : { signal }) },
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
