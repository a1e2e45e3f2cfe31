/**
 * The `CommandResult` envelope: its zod shape (the tools' `outputSchema`) and
 * the one function that turns a result into an MCP tool result.
 *
 * @module
 */
import * as z from "zod";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  type CommandResult,
  isOkCode,
  RESULT_CODES,
  type ResultCode,
  type StageResult,
} from "../result/codes.ts";
import { compactControls, type Compacted } from "./printable.ts";

/** `outputSchema` of `run_command` and `explain_command`. */
export const COMMAND_RESULT_SHAPE = {
  ok: z.boolean().describe("True when the command ran (or would be allowed)."),
  code: z.enum(RESULT_CODES as [ResultCode, ...ResultCode[]]).describe(
    "One result code; see describe_policy and the README table.",
  ),
  stdout: z.string().describe(
    "Standard output, secrets redacted, capped; a long one keeps its head and tail (the middle: job_output).",
  ),
  stderr: z.string().describe("Standard error, redacted and cut like stdout."),
  exit_code: z.number().int().nullable().describe("Exit status, or null if it did not run."),
  duration_ms: z.number().describe("Wall time of the call in milliseconds."),
  policy_reason: z.string().describe("Why the call was allowed or refused, in words."),
  stages: z.array(z.object({
    argv: z.array(z.string()),
    exit_code: z.number().int().nullable(),
  })).optional().describe(
    "A composed command's stages in order, each with its exit status (null: skipped).",
  ),
  job_id: z.string().optional().describe(
    "The job running this command (JOB_RUNNING) or holding its whole output (job_status, job_output).",
  ),
  approval_id: z.string().optional().describe(
    "The approval a prompted command waits for (APPROVAL_PENDING) or was refused under.",
  ),
};

/**
 * Builds an envelope whose `ok` always agrees with its code, so no code path
 * can report `ok: true` for a refusal.
 */
export function makeResult(
  code: ResultCode,
  fields: {
    policyReason: string;
    startedAt: number;
    stdout?: string;
    stderr?: string;
    exitCode?: number | null;
    stages?: readonly StageResult[];
    jobId?: string;
    approvalId?: string;
  },
): CommandResult {
  return Object.freeze({
    ...(fields.stages === undefined ? {} : { stages: fields.stages }),
    ...(fields.jobId === undefined ? {} : { job_id: fields.jobId }),
    ...(fields.approvalId === undefined ? {} : { approval_id: fields.approvalId }),
    ok: isOkCode(code),
    code,
    stdout: fields.stdout ?? "",
    stderr: fields.stderr ?? "",
    exit_code: fields.exitCode ?? null,
    duration_ms: Math.round((performance.now() - fields.startedAt) * 1000) / 1000,
    policy_reason: fields.policyReason,
  });
}

/**
 * Output shown in the text block, per stream. The full (capped) output is in
 * `structuredContent`; the text block is the compact rendering for clients
 * and models that read text only, so the output is never carried twice at
 * full size.
 */
export const TEXT_PREVIEW_CHARS = 4096;

/**
 * The MCP form, built once: `structuredContent` holds the envelope (control
 * characters compacted, see `printable.ts`), and the text block a compact
 * rendering: the code, the exit status, the whole reason (some clients drop
 * `structuredContent` when `isError` is set, so a refusal's reason must be in
 * the text) and the start of each output stream. A refusal sets `isError`,
 * which is how MCP tells a model that the tool call did not succeed; a tool
 * whose answer *is* a verdict (explain_command) passes its own flag.
 */
export function toToolResult(
  result: CommandResult,
  isError: boolean = !result.ok,
): CallToolResult {
  const stdout = compactControls(result.stdout);
  const stderr = compactControls(result.stderr);
  const structured = { ...result, stdout: stdout.text, stderr: stderr.text };
  // A job's stored output is offered as resources too, for clients that read them.
  const links = result.job_id === undefined
    ? []
    : (["stdout", "stderr"] as const).map((stream) => ({
      type: "resource_link" as const,
      uri: `htmcp://jobs/${result.job_id}/${stream}`,
      name: `${stream} of ${result.job_id}`,
      mimeType: "text/plain",
    }));
  return {
    content: [{ type: "text", text: renderText(structured, stdout, stderr) }, ...links],
    structuredContent: structured,
    isError,
  };
}

function renderText(result: CommandResult, stdout: Compacted, stderr: Compacted): string {
  const exit = result.exit_code === null
    ? "did not run to an exit status"
    : `exit ${result.exit_code}`;
  const lines = [`${result.code} (${exit}, ${result.duration_ms} ms)`, result.policy_reason];
  if (result.job_id !== undefined) lines.push(`job_id: ${result.job_id}`);
  if (result.approval_id !== undefined) lines.push(`approval_id: ${result.approval_id}`);
  for (const [name, stream] of [["stdout", stdout], ["stderr", stderr]] as const) {
    if (stream.text === "") continue;
    const shown = stream.text.length > TEXT_PREVIEW_CHARS
      ? `${stream.text.slice(0, TEXT_PREVIEW_CHARS)}\n[... ${
        stream.text.length - TEXT_PREVIEW_CHARS
      } more characters in structuredContent.${name}]`
      : stream.text;
    const controls = stream.controlChars === 0
      ? ""
      : ` (${stream.controlChars} control characters shown as symbols such as \u2400)`;
    lines.push(`--- ${name}${controls} ---`, shown);
  }
  return lines.join("\n");
}
