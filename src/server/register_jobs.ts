/**
 * Registers the job tools and the job output resource template on one SDK
 * server. Every handler checks the caller's scope and ownership in the tool
 * functions (`src/tools/job_tools.ts`); the resource read does the same.
 *
 * @module
 */
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type CallToolResult, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { CallerIdentity } from "../tools/caller.ts";
import { hasScope } from "../tools/caller.ts";
import {
  JOB_CANCEL_DESCRIPTION,
  JOB_LIST_DESCRIPTION,
  JOB_OUTPUT_DESCRIPTION,
  JOB_STATUS_DESCRIPTION,
  jobCancelTool,
  jobListTool,
  jobOutputTool,
  type JobReply,
  jobStatusTool,
  MAX_PAGE_BYTES,
  MAX_WAIT_MS,
} from "../tools/job_tools.ts";
import { isLiveState, jobsFor } from "../jobs/mod.ts";
import { sessionOwner } from "../session/mod.ts";
import { RESULT_CODES, type ResultCode } from "../result/codes.ts";
import type { ServerContext } from "../context/mod.ts";

/** The URI of a job's stored output stream (also in run_command's resource links). */
export const JOB_OUTPUT_URI = "htmcp://jobs/{job_id}/{stream}";

/** `resources/read` of a resource that is absent or not the caller's (MCP's "Resource not found"). */
const RESOURCE_NOT_FOUND = -32002;

const JOB_VIEW = z.object({
  job_id: z.string(),
  state: z.enum(["awaiting_approval", "running", "ended", "lost"]),
  origin: z.enum(["background", "adaptive", "foreground"]),
  command: z.string(),
  argv: z.array(z.string()),
  cwd: z.string().describe("Jail-relative."),
  code: z.enum(RESULT_CODES as [ResultCode, ...ResultCode[]]).nullable().describe(
    "The run's result code once ended.",
  ),
  exit_code: z.number().int().nullable(),
  reason: z.string(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  elapsed_ms: z.number(),
  timeout_ms: z.number().int().describe("The command's deadline."),
  stdout_bytes: z.number().int(),
  stderr_bytes: z.number().int(),
  truncated: z.boolean(),
  cancel_requested: z.boolean(),
  tail: z.string().describe("The last lines of output while it ran (redacted)."),
  approval_id: z.string().optional().describe(
    "The approval a prompted command waits for (awaiting_approval) or ran under.",
  ),
});

const JOB_REPLY_SHAPE = {
  ok: z.boolean(),
  code: z.enum(RESULT_CODES as [ResultCode, ...ResultCode[]]),
  reason: z.string(),
  job: JOB_VIEW.optional(),
  jobs: z.array(JOB_VIEW).optional(),
  page: z.object({
    stream: z.enum(["stdout", "stderr"]),
    text: z.string(),
    offset: z.number().int(),
    next_offset: z.number().int().nullable(),
    total_bytes: z.number().int(),
  }).optional(),
};

const JOB_ID = z.string().max(128).describe("The job id run_command returned.");

function toResult(reply: JobReply): CallToolResult {
  // The page text is shown once, in the text block; structuredContent keeps
  // it too because some clients give the model only that (the page is
  // bounded by MAX_PAGE_BYTES, so it is never large twice).
  const lines = [`${reply.code}: ${reply.reason}`];
  if (reply.page !== undefined) lines.push(reply.page.text);
  else lines.push(JSON.stringify(reply.job ?? reply.jobs ?? null));
  return {
    content: [{ type: "text", text: lines.join("\n") }],
    structuredContent: reply as unknown as Record<string, unknown>,
    ...(reply.ok ? {} : { isError: true }),
  };
}

/**
 * @param server The SDK server of one caller.
 * @param context The shared server context.
 * @param caller Who this server instance serves.
 */
export function registerJobTools(
  server: McpServer,
  context: ServerContext,
  caller: CallerIdentity,
): void {
  const readOnly = {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  };
  server.registerTool("job_status", {
    title: "Status of a job",
    description: JOB_STATUS_DESCRIPTION,
    inputSchema: {
      job_id: JOB_ID,
      wait_ms: z.number().int().min(0).max(MAX_WAIT_MS).optional().describe(
        `Wait up to this many ms for the job to end (at most ${MAX_WAIT_MS}).`,
      ),
    },
    outputSchema: JOB_REPLY_SHAPE,
    annotations: readOnly,
  }, async (args: Record<string, unknown>) => toResult(await jobStatusTool(context, caller, args)));

  server.registerTool("job_output", {
    title: "Read a job's output",
    description: JOB_OUTPUT_DESCRIPTION,
    inputSchema: {
      job_id: JOB_ID,
      stream: z.enum(["stdout", "stderr"]).optional().describe("Which stream (default stdout)."),
      offset: z.number().int().min(0).optional().describe("Byte offset to start at (default 0)."),
      limit: z.number().int().min(1).max(MAX_PAGE_BYTES).optional().describe(
        `Bytes to return at most (default 16384, at most ${MAX_PAGE_BYTES}).`,
      ),
    },
    outputSchema: JOB_REPLY_SHAPE,
    annotations: readOnly,
  }, async (args: Record<string, unknown>) => toResult(await jobOutputTool(context, caller, args)));

  server.registerTool("job_cancel", {
    title: "Cancel a job",
    description: JOB_CANCEL_DESCRIPTION,
    inputSchema: { job_id: JOB_ID },
    outputSchema: JOB_REPLY_SHAPE,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  }, async (args: Record<string, unknown>) => toResult(await jobCancelTool(context, caller, args)));

  server.registerTool("job_list", {
    title: "List your jobs",
    description: JOB_LIST_DESCRIPTION,
    outputSchema: JOB_REPLY_SHAPE,
    annotations: readOnly,
  }, async () => toResult(await jobListTool(context, caller)));

  server.registerResource(
    "job-output",
    new ResourceTemplate(JOB_OUTPUT_URI, {
      list: async () => {
        const jobs = jobsFor(context);
        if (jobs === null || !hasScope(caller, "shell:read")) return { resources: [] };
        const records = await jobs.store.list(sessionOwner(caller.clientId));
        return {
          resources: records.filter((r) => !isLiveState(r.state)).flatMap((r) =>
            (["stdout", "stderr"] as const).map((stream) => ({
              uri: `htmcp://jobs/${r.id}/${stream}`,
              name: `${stream} of ${r.id}`,
              mimeType: "text/plain",
            }))
          ),
        };
      },
    }),
    {
      title: "Job output",
      description: "The stored, redacted stdout or stderr of one of your jobs.",
      mimeType: "text/plain",
    },
    async (uri, variables) => {
      // Same answer for absent, foreign and unreadable: nothing is revealed.
      const missing = () => new McpError(RESOURCE_NOT_FOUND, `Resource ${uri.href} not found`);
      if (!hasScope(caller, "shell:read")) {
        throw new McpError(ErrorCode.InvalidRequest, 'This token lacks the "shell:read" scope.');
      }
      const jobs = jobsFor(context);
      const id = variables["job_id"];
      const stream = variables["stream"];
      if (jobs === null || typeof id !== "string" || (stream !== "stdout" && stream !== "stderr")) {
        throw missing();
      }
      const output = await jobs.store.output(sessionOwner(caller.clientId), id);
      if (output === null) throw missing();
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: output[stream] }] };
    },
  );
}
