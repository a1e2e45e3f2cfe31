/**
 * Builds one SDK `McpServer` with htmcp's three tools for one caller (one per
 * stdio process, one per HTTP session). The handlers are thin: each hands the
 * SDK-validated arguments to the tool function, which snapshots them itself.
 *
 * @module
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { VERSION } from "../version.ts";
import type { CallerIdentity } from "../tools/caller.ts";
import { COMMAND_RESULT_SHAPE, toToolResult } from "../tools/envelope.ts";
import { RUN_COMMAND_DESCRIPTION, runCommandTool } from "../tools/run_command.ts";
import {
  EXPLAIN_COMMAND_DESCRIPTION,
  explainCommandTool,
  explainToolResult,
} from "../tools/explain_command.ts";
import {
  DESCRIBE_POLICY_DESCRIPTION,
  describePolicy,
  POLICY_DESCRIPTION_SHAPE,
} from "../tools/describe_policy.ts";
import { pathCheckOnlyNotice } from "../sandbox/mod.ts";
import type { ServerContext } from "./context.ts";
import { CallRegistry } from "./calls.ts";

const COMMAND_INPUT = {
  command: z.string().describe('The command line, e.g. "ls -la src". No shell syntax.'),
  cwd: z.string().optional().describe("Working directory inside the jail (default: jail root)."),
};

type CommandArgs = { command: string; cwd?: string | undefined };

/**
 * @param context The shared server context.
 * @param caller Who this server instance serves.
 * @param calls Where its calls in flight are registered, so the transport can
 *   cancel them (session end, shutdown, a closed response stream).
 */
export function createMcpServer(
  context: ServerContext,
  caller: CallerIdentity,
  calls: CallRegistry = new CallRegistry(),
): McpServer {
  const sandbox = context.executor.describe();
  const server = new McpServer(
    { name: "htmcp", version: VERSION },
    {
      instructions:
        "htmcp runs allowlisted commands without a shell in a jailed directory. Call describe_policy first." +
        (sandbox.mode === "none" ? ` ${pathCheckOnlyNotice(sandbox.commandUid)}` : ""),
    },
  );
  const description = describePolicy(context.policy, sandbox, context.policyHash);

  server.registerTool(
    "run_command",
    {
      title: "Run a command",
      description: RUN_COMMAND_DESCRIPTION,
      inputSchema: COMMAND_INPUT,
      outputSchema: COMMAND_RESULT_SHAPE,
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async (args: CommandArgs, extra: { signal: AbortSignal; requestId: string | number }) => {
      const call = calls.begin(extra.requestId, extra.signal);
      try {
        return toToolResult(await runCommandTool(context, caller, args, call.signal));
      } finally {
        call.end();
      }
    },
  );

  server.registerTool(
    "explain_command",
    {
      title: "Explain a command's verdict",
      description: EXPLAIN_COMMAND_DESCRIPTION,
      inputSchema: COMMAND_INPUT,
      outputSchema: COMMAND_RESULT_SHAPE,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args: CommandArgs) => explainToolResult(await explainCommandTool(context, caller, args)),
  );

  server.registerTool("describe_policy", {
    title: "Describe the policy",
    description: DESCRIBE_POLICY_DESCRIPTION,
    outputSchema: POLICY_DESCRIPTION_SHAPE,
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, () => {
    // Scope is checked here too: the HTTP layer refuses first, this is the
    // second check should a route ever skip it.
    if (caller.scopes !== null && !caller.scopes.has("shell:read")) {
      return {
        content: [{ type: "text", text: 'This token lacks the "shell:read" scope.' }],
        isError: true,
      };
    }
    return {
      content: [{ type: "text", text: JSON.stringify(description) }],
      structuredContent: description,
    };
  });

  return server;
}
