/**
 * The `CommandResult` envelope: its zod shape (the tools' `outputSchema`) and
 * the one function that turns a result into an MCP tool result.
 *
 * @module
 */
import { z } from "zod";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import {
  type CommandResult,
  isOkCode,
  RESULT_CODES,
  type ResultCode,
  type StageResult,
} from "../result/codes.ts";

/** `outputSchema` of `run_command` and `explain_command`. */
export const COMMAND_RESULT_SHAPE = {
  ok: z.boolean().describe("True when the command ran (or would be allowed)."),
  code: z.enum(RESULT_CODES as [ResultCode, ...ResultCode[]]).describe(
    "One result code; see describe_policy and the README table.",
  ),
  stdout: z.string().describe("Standard output, secrets redacted, capped."),
  stderr: z.string().describe("Standard error, secrets redacted, capped."),
  exit_code: z.number().int().nullable().describe("Exit status, or null if it did not run."),
  duration_ms: z.number().describe("Wall time of the call in milliseconds."),
  policy_reason: z.string().describe("Why the call was allowed or refused, in words."),
  stages: z.array(z.object({
    argv: z.array(z.string()),
    exit_code: z.number().int().nullable(),
  })).optional().describe(
    "A composed command's stages in order, each with its exit status (null: skipped).",
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
  },
): CommandResult {
  return Object.freeze({
    ...(fields.stages === undefined ? {} : { stages: fields.stages }),
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
 * The MCP form: the same object as JSON text (for clients that ignore
 * structured content) and as `structuredContent`. A refusal sets `isError`,
 * which is how MCP tells a model that the tool call did not succeed.
 */
export function toToolResult(result: CommandResult): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(result) }],
    structuredContent: { ...result },
    isError: !result.ok,
  };
}
