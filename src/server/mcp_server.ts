/**
 * Builds one SDK `McpServer` with htmcp's tools for one caller (one per
 * stdio process, one per HTTP session). The handlers are thin: each hands the
 * SDK-validated arguments to the tool function, which snapshots them itself.
 *
 * @module
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import * as z from "zod";
import { serverIdentity } from "./identity.ts";
import { LazyJsonSchemaValidator } from "./lazy_validator.ts";
import { serverInstructions } from "./instructions.ts";
import type { CallerIdentity } from "../tools/caller.ts";
import { COMMAND_RESULT_SHAPE, toToolResult } from "../tools/envelope.ts";
import { RUN_COMMAND_DESCRIPTION, runCommandTool, type RunHooks } from "../tools/run_command.ts";
import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { registerJobTools } from "./register_jobs.ts";
import { compactControls } from "../tools/printable.ts";
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
import { instrumentToolCalls } from "../telemetry/mod.ts";
import { FULL_CONTROL_RUN_DESCRIPTION } from "../full_control/mod.ts";
import type { ServerContext } from "../context/mod.ts";
import { CallRegistry } from "./calls.ts";
import { MAX_ARGV_WORDS, MAX_STDIN_BYTES } from "../tools/snapshot.ts";
import {
  SESSION_END_DESCRIPTION,
  SESSION_REPORT_SHAPE,
  SESSION_START_DESCRIPTION,
  sessionEndTool,
  sessionStartTool,
} from "../tools/session_tools.ts";
import { registerAuditTailTools } from "./register_audit_tail.ts";
import { clientQuestion } from "./elicit.ts";
import { registerTaskSupport, taskServerOptions } from "./register_tasks.ts";

const EXPLAIN_INPUT = {
  command: z.string().optional().describe(
    'The command line, e.g. "ls -la src | head" (htmcp parses it; no shell). Give this or argv.',
  ),
  argv: z.array(z.string()).min(1).max(MAX_ARGV_WORDS).optional().describe(
    'One command as words, taken exactly as given (no parsing, no globs), e.g. ["grep", "a b", "f"]. Give this or command.',
  ),
  cwd: z.string().optional().describe("Working directory inside the jail (default: jail root)."),
};

const RUN_INPUT = {
  ...EXPLAIN_INPUT,
  session_id: z.string().optional().describe(
    "Run in this session's working directory (from session_start); a leading cd DIR moves it.",
  ),
  stdin: z.string().optional().describe(
    `Text for the command's standard input (at most ${MAX_STDIN_BYTES} bytes; one plain command only, not a pipeline).`,
  ),
  background: z.boolean().optional().describe(
    "Return at once with a job id; the command runs on (see job_status, job_output, job_cancel).",
  ),
  timeout_ms: z.number().int().min(1).optional().describe(
    "The command's deadline in ms (at most the policy's limits.max_timeout_ms).",
  ),
};

type CommandArgs = {
  command?: string | undefined;
  argv?: string[] | undefined;
  cwd?: string | undefined;
  stdin?: string | undefined;
  session_id?: string | undefined;
  background?: boolean | undefined;
  timeout_ms?: number | undefined;
};

/**
 * Builds the SDK server of one caller: the tools (`run_command`,
 * `explain_command`, `session_start`, `session_end`, `describe_policy`, the
 * job tools, and `audit_tail` when `[audit] expose_to_model` is on), their
 * task support, the instructions generated from the policy, and the
 * telemetry of every call. Each tool checks the caller's scope itself, a
 * second check behind the HTTP layer's.
 *
 * @param context The shared server context.
 * @param caller Who this server instance serves.
 * @param calls Where its calls in flight are registered, so the transport can
 *   cancel them (session end, shutdown, a closed response stream).
 * @returns The SDK server, not yet connected to a transport.
 */
export function createMcpServer(
  context: ServerContext,
  caller: CallerIdentity,
  calls: CallRegistry = new CallRegistry(),
): McpServer {
  const sandbox = context.executor.describe();
  const server = new McpServer(serverIdentity(), {
    instructions: serverInstructions(context),
    jsonSchemaValidator: new LazyJsonSchemaValidator(),
    ...taskServerOptions(context, caller),
  });
  instrumentToolCalls(server, context.redactor, caller);
  registerTaskSupport(server, context, caller);
  const description = describePolicy(context.policy, sandbox, context.policyHash);

  server.registerTool(
    "run_command",
    {
      title: "Run a command",
      description: context.policy.fullControl === undefined
        ? RUN_COMMAND_DESCRIPTION
        : FULL_CONTROL_RUN_DESCRIPTION,
      inputSchema: RUN_INPUT,
      outputSchema: COMMAND_RESULT_SHAPE,
      annotations: {
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        // Commands that reach a network reach the world outside the jail.
        openWorldHint: context.policy.sandbox.network !== "none" || sandbox.mode === "none",
      },
    },
    async (args: CommandArgs, extra) => {
      const call = calls.begin(extra.requestId, extra.signal);
      const question = clientQuestion(server, caller.protocolEra, extra._meta, extra.requestId);
      try {
        return question.carry(toToolResult(
          await runCommandTool(context, caller, args, call.signal, {
            ...progressHooks(extra),
            ...question.hooks,
          }),
        ));
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
      inputSchema: EXPLAIN_INPUT,
      outputSchema: COMMAND_RESULT_SHAPE,
      annotations: {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
    },
    async (args: CommandArgs) => explainToolResult(await explainCommandTool(context, caller, args)),
  );

  server.registerTool("session_start", {
    title: "Start a session",
    description: SESSION_START_DESCRIPTION,
    outputSchema: SESSION_REPORT_SHAPE,
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
  }, async () => {
    const report = await sessionStartTool(context, caller);
    return {
      content: [{ type: "text", text: JSON.stringify(report) }],
      structuredContent: report,
      ...(report.ok ? {} : { isError: true }),
    };
  });

  server.registerTool("session_end", {
    title: "End a session",
    description: SESSION_END_DESCRIPTION,
    inputSchema: { session_id: z.string().describe("The id session_start returned.") },
    outputSchema: { ok: z.boolean(), reason: z.string() },
    // Ending an ended session changes nothing more.
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  }, async (args: { session_id: string }) => {
    const ended = await sessionEndTool(context, caller, args);
    return {
      content: [{ type: "text", text: ended.reason }],
      structuredContent: ended,
      ...(ended.ok ? {} : { isError: true }),
    };
  });

  server.registerTool("describe_policy", {
    title: "Describe the policy",
    description: DESCRIBE_POLICY_DESCRIPTION,
    outputSchema: POLICY_DESCRIPTION_SHAPE,
    annotations: {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
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

  registerAuditTailTools(server, context, caller);
  registerJobTools(server, context, caller);
  return server;
}

/**
 * Progress for a call that asked for it (a `progressToken`): each tick is a
 * `notifications/progress` whose `progress` is the elapsed ms (it only
 * grows, as the spec requires) and whose message is already redacted.
 */
function progressHooks(extra: {
  _meta?: { progressToken?: string | number | undefined } | undefined;
  sendNotification: (n: ServerNotification) => Promise<void>;
}): RunHooks {
  const token = extra._meta?.progressToken;
  if (token === undefined) return {};
  return {
    progress: (message, elapsedMs) => {
      extra.sendNotification({
        method: "notifications/progress",
        // Control characters shown as the reply shows them (printable.ts).
        params: {
          progressToken: token,
          progress: Math.round(elapsedMs),
          message: compactControls(message).text,
        },
      }).catch(() => {
        // The client went away: the call's own cancellation handles that.
      });
    },
  };
}
