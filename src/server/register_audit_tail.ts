/**
 * Registers `audit_tail` when the operator exposed the audit log to the
 * model (`[audit] expose_to_model = true`); otherwise the tool does not
 * exist for clients at all (not listed, not callable).
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallerIdentity } from "../tools/caller.ts";
import {
  AUDIT_TAIL_DESCRIPTION,
  AUDIT_TAIL_INPUT,
  AUDIT_TAIL_SHAPE,
  auditTailTool,
} from "../tools/audit_tail.ts";
import type { ServerContext } from "../context/mod.ts";

/**
 * @param server the per-caller MCP server
 * @param context the shared server context
 * @param caller who this server instance serves
 */
export function registerAuditTailTools(
  server: McpServer,
  context: ServerContext,
  caller: CallerIdentity,
): void {
  if (context.policy.auditExposeToModel !== true) return;
  server.registerTool("audit_tail", {
    title: "Read your recent audit records",
    description: AUDIT_TAIL_DESCRIPTION,
    inputSchema: AUDIT_TAIL_INPUT,
    outputSchema: AUDIT_TAIL_SHAPE,
    annotations: {
      readOnlyHint: true,
      destructiveHint: false,
      // Each call adds its own audit record, so the next answer differs.
      idempotentHint: false,
      openWorldHint: false,
    },
  }, async (args: { limit?: number | undefined }, extra: { requestId: string | number }) => {
    const result = await context.track(auditTailTool(context, caller, args, extra.requestId));
    return {
      content: [{ type: "text", text: JSON.stringify(result) }],
      structuredContent: { ...result, records: [...result.records] },
      ...(result.ok ? {} : { isError: true }),
    };
  });
}
