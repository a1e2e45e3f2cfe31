/**
 * The 2026-07-28 face of htmcp: an SDK v2 `Server` whose `tools/list` and
 * `tools/call` are answered by the same 2025-era `McpServer` every other
 * client gets (`createMcpServer()`), over an in-process link. The v2 SDK owns
 * the 2026 wire (`server/discover`, the per-request `_meta` envelope,
 * `resultType`, the `Mcp-Method`/`Mcp-Name` checks, streams); this module only
 * adds what the spec leaves to the server: a deterministic, cacheable tool
 * list, the `requestState` verifier, and the delivery of approval
 * questions as `input_required` results (`input_required.ts`).
 *
 * Deny on failure: an error the linked server answers is passed on as the
 * same JSON-RPC error; a link that fails to initialize refuses the request.
 *
 * @module
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type Implementation,
  type ListToolsResult,
  ProtocolError,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { TaskCapableServer, type TaskRunner } from "./tasks_extension.ts";
import { type LinkOutcome, V1Link } from "./v1_link.ts";
import type { OpenedState } from "./request_state.ts";
import { answerOf, deliverQuestion, type RoundTripDeps } from "./input_required.ts";
import {
  declaresFormElicitation,
  ROUND_TRIP_META_KEY,
  type RoundTripAnswer,
  roundTripMeta,
} from "../approvals/round_trip.ts";

/**
 * How long a 2026 client may reuse a `tools/list` answer. Short, because the
 * list follows the policy (which is reloaded on change) and the caller's
 * scopes; `private`, because another caller may see other tools.
 */
export const TOOLS_LIST_TTL_MS = 60_000;

/** What the 2026 face needs. */
export interface ModernServerOptions {
  /** Name, version, title and icons, as `server/discover` reports them. */
  readonly info: Implementation;
  readonly instructions: string;
  /**
   * Who runs this caller's tasks (the Tasks extension, `tasks_extension.ts`);
   * absent when the server keeps no jobs, and then the extension is not offered.
   */
  readonly tasks?: TaskRunner;
  /** Builds the 2025-era server whose tools this face serves. */
  readonly build: () => McpServer;
  /**
   * Opens (and consumes) the `requestState` a retried `tools/call` echoes,
   * for that call's tool and arguments. A refusal is answered with the
   * spec's `-32602` "Invalid or expired requestState".
   */
  readonly openState: (
    state: string,
    call: { readonly name: string; readonly arguments: Record<string, unknown> },
  ) => Promise<OpenedState>;
  /** Seals a question's state and audits an answer refused at this edge. */
  readonly roundTrip: RoundTripDeps;
}

/**
 * Where a verified request state reaches the tool handler (`extra._meta`).
 * Only this module sets it: the client's own `_meta` is never passed on.
 */
export const VERIFIED_STATE_META_KEY = "dev.htmcp/verifiedRequestState";

/** Builds one 2026-era server instance (one per HTTP request, one per stdio connection). */
export function createModernServer(options: ModernServerOptions): Server {
  const server = new TaskCapableServer(options.info, {
    capabilities: { tools: { listChanged: false } },
    instructions: options.instructions,
    cacheHints: { "tools/list": { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: "private" } },
  }, options.tasks);
  let linked: { readonly link: V1Link; readonly inner: McpServer } | null = null;
  const open = async (ctx: ServerContext): Promise<V1Link> => {
    if (linked === null) {
      const link = new V1Link();
      const inner = options.build();
      await inner.connect(link);
      linked = { link, inner };
    }
    // The SDK has already validated the envelope; its published type is `{}`.
    const envelope: Readonly<Record<string, unknown>> = ctx.mcpReq.envelope ?? {};
    unwrap(
      await linked.link.initialize(
        envelope[CLIENT_INFO_META_KEY],
        envelope[CLIENT_CAPABILITIES_META_KEY],
      ),
    );
    return linked.link;
  };
  server.onclose = () => {
    const current = linked;
    linked = null;
    void current?.inner.close().catch(() => {});
  };

  server.setRequestHandler("tools/list", async (_request, ctx) => {
    const link = await open(ctx);
    const result = unwrap(await link.request("tools/list", {}, { signal: ctx.mcpReq.signal }));
    const tools = Array.isArray(result.tools) ? [...result.tools] : [];
    // Deterministic order: a cache keyed on the answer must not miss because
    // the same tools came in another order.
    tools.sort((a, b) => compareNames(nameOf(a), nameOf(b)));
    return {
      tools,
      ttlMs: TOOLS_LIST_TTL_MS,
      cacheScope: "private",
    } as ListToolsResult;
  });

  server.setRequestHandler("tools/call", async (request, ctx) => {
    const link = await open(ctx);
    const args = request.params.arguments ?? {};
    const call = { name: request.params.name, arguments: args };
    const params: Record<string, unknown> = { ...call };
    // Only what the tools use is passed on from the client's `_meta`.
    const meta: Record<string, unknown> = {};
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken !== undefined) meta.progressToken = progressToken;
    const state: unknown = ctx.mcpReq.requestState();
    let answer: RoundTripAnswer | null = null;
    if (state !== undefined) {
      const opened = typeof state === "string"
        ? await options.openState(state, call)
        : { ok: false as const, reason: "malformed" as const };
      if (!opened.ok) {
        throw new ProtocolError(-32602, "Invalid or expired requestState", {
          reason: "invalid_request_state",
        });
      }
      meta[VERIFIED_STATE_META_KEY] = opened.payload;
      answer = await answerOf(ctx, opened.payload, call, options.roundTrip);
    }
    // The request's own capabilities decide whether a question may be asked.
    const envelope: Readonly<Record<string, unknown>> = ctx.mcpReq.envelope ?? {};
    meta[ROUND_TRIP_META_KEY] = roundTripMeta({
      form: declaresFormElicitation(envelope[CLIENT_CAPABILITIES_META_KEY]),
      answer,
    });
    if (Object.keys(meta).length > 0) params._meta = meta;
    const result = unwrap(
      await link.request("tools/call", params, {
        signal: ctx.mcpReq.signal,
        onNotification: (notification) => {
          if (notification.method !== "notifications/progress") return;
          void ctx.mcpReq.notify({
            method: "notifications/progress",
            params: notification.params as Record<string, unknown>,
          }).catch(() => {});
        },
      }),
    );
    return await deliverQuestion(result, call, options.roundTrip);
  });
  return server;
}

function unwrap(outcome: LinkOutcome): Record<string, unknown> {
  if (outcome.ok) return outcome.result;
  throw new ProtocolError(outcome.error.code, outcome.error.message, outcome.error.data);
}

function nameOf(tool: unknown): string {
  return typeof tool === "object" && tool !== null &&
      typeof (tool as { name?: unknown }).name === "string"
    ? (tool as { name: string }).name
    : "";
}

/** Code-unit order: the same on every runtime and locale. */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
