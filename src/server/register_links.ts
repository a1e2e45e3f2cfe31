/**
 * Registers the download-link tools on one HTTP session's MCP server. Called
 * only by the HTTP transport, and only when links are on (`startLinks`
 * returned a service): a stdio server has no URL to hand out.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import * as z from "zod";
import type { CallerIdentity } from "../tools/caller.ts";
import type { ServerContext } from "../context/mod.ts";
import {
  CREATE_FILE_LINK_DESCRIPTION,
  createFileLinkInput,
  createFileLinkTool,
  LINK_LIST_SHAPE,
  LINK_RESULT_SHAPE,
  type LinkToolDeps,
  LIST_FILE_LINKS_DESCRIPTION,
  listFileLinksTool,
  REVOKE_FILE_LINK_DESCRIPTION,
  revokeFileLinkTool,
} from "../tools/file_links.ts";

function asToolResult<T extends { ok: boolean; reason: string }>(result: T) {
  return {
    // Some clients drop structuredContent on errors: the text carries everything.
    content: [{ type: "text" as const, text: JSON.stringify(result) }],
    structuredContent: result,
    ...(result.ok ? {} : { isError: true }),
  };
}

/**
 * Adds `create_file_link`, `list_file_links` and `revoke_file_link`.
 *
 * @param server The session's MCP server.
 * @param context The shared server context.
 * @param caller Who this session serves.
 * @param deps The link store and the base URL.
 */
export function registerLinkTools(
  server: McpServer,
  context: ServerContext,
  caller: CallerIdentity,
  deps: LinkToolDeps,
): void {
  server.registerTool("create_file_link", {
    title: "Create a file download link",
    description: CREATE_FILE_LINK_DESCRIPTION,
    inputSchema: createFileLinkInput(deps.store.settings.maxTtlMs / 1000),
    outputSchema: LINK_RESULT_SHAPE,
    // Not read-only: it stores a snapshot and makes a URL anyone holding it can open.
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true,
    },
  }, async (args: unknown) => asToolResult(await createFileLinkTool(context, caller, deps, args)));

  server.registerTool("list_file_links", {
    title: "List my file download links",
    description: LIST_FILE_LINKS_DESCRIPTION,
    outputSchema: LINK_LIST_SHAPE,
    annotations: {
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  }, async () => asToolResult(await listFileLinksTool(context, caller, deps)));

  server.registerTool("revoke_file_link", {
    title: "Revoke a file download link",
    description: REVOKE_FILE_LINK_DESCRIPTION,
    inputSchema: { link_id: z.string().max(64).describe("The link_id create_file_link returned.") },
    outputSchema: LINK_RESULT_SHAPE,
    annotations: {
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  }, async (args: unknown) => asToolResult(await revokeFileLinkTool(context, caller, deps, args)));
}
