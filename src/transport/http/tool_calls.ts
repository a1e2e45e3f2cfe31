/**
 * Finds the `tools/call` requests in a parsed JSON-RPC body, so the transport
 * can refuse a call whose token lacks the tool's scope before the MCP server
 * sees it.
 *
 * The body is parsed once and the same object is handed to the SDK
 * (`parsedBody`), so the name checked here is the name the SDK dispatches on:
 * there is no second parse that could read a duplicated key differently.
 *
 * @module
 */
import { type Scope, TOOL_SCOPES } from "../../auth/mod.ts";

/** One `tools/call` found in a body. */
export interface ToolCall {
  /** The tool name as sent, or null when `params.name` is not a string (the SDK refuses those). */
  readonly tool: string | null;
  /** The scope the tool needs; null for tools we do not serve (the SDK answers "not found"). */
  readonly scope: Scope | null;
  /** The JSON-RPC request id as text, so the audit can be matched with the client's own logs. */
  readonly requestId: string | null;
  /** The JSON-RPC request id as sent (1 and "1" differ). */
  readonly id: string | number | null;
}

/**
 * Lists the tool calls in a single message or a batch.
 *
 * @example
 * ```ts
 * toolCallsIn({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "run_command" } });
 * // [{ tool: "run_command", scope: "shell:execute" }]
 * ```
 */
export function toolCallsIn(body: unknown): ToolCall[] {
  const messages = Array.isArray(body) ? body : [body];
  const calls: ToolCall[] = [];
  for (const message of messages) {
    if (!isRecord(message) || message.method !== "tools/call") continue;
    const params = message.params;
    const name = isRecord(params) && typeof params.name === "string" ? params.name : null;
    const id = message.id;
    calls.push({
      tool: name,
      scope: name === null ? null : TOOL_SCOPES.get(name) ?? null,
      requestId: typeof id === "string" || typeof id === "number" ? String(id) : null,
      id: typeof id === "string" || typeof id === "number" ? id : null,
    });
  }
  return calls;
}

/**
 * The scope each non-tool method that reaches a caller's jobs needs, checked
 * against the token of the request that carries it on a 2025 session: its
 * task store and job resources check the scopes the session opened with,
 * and a narrower token sent on that session must not act with the wider
 * ones. (`tasks/update` is the 2026 era's, listed for completeness.)
 */
const METHOD_SCOPES: ReadonlyMap<string, Scope> = new Map<string, Scope>([
  ["tasks/get", "shell:read"],
  ["tasks/result", "shell:read"],
  ["tasks/list", "shell:read"],
  ["tasks/cancel", "shell:execute"],
  // Cancelling a call in flight kills its process tree, as job_cancel does.
  ["notifications/cancelled", "shell:execute"],
  ["tasks/update", "shell:execute"],
  ["resources/list", "shell:read"],
  ["resources/templates/list", "shell:read"],
  ["resources/read", "shell:read"],
]);

/** One request for a method of `METHOD_SCOPES`, with the scope it needs. */
export interface ScopedMethod {
  readonly method: string;
  readonly scope: Scope;
}

/**
 * Lists the requests (single or batched) for methods that need a scope
 * although they are not tool calls.
 *
 * @example
 * ```ts
 * scopedMethodsIn({ jsonrpc: "2.0", id: 1, method: "tasks/cancel", params: { taskId: "t" } });
 * // [{ method: "tasks/cancel", scope: "shell:execute" }]
 * ```
 */
export function scopedMethodsIn(body: unknown): ScopedMethod[] {
  const messages = Array.isArray(body) ? body : [body];
  const found: ScopedMethod[] = [];
  for (const message of messages) {
    if (!isRecord(message) || typeof message.method !== "string") continue;
    const scope = METHOD_SCOPES.get(message.method);
    if (scope !== undefined) found.push({ method: message.method, scope });
  }
  return found;
}

/**
 * True when the body is (or, in a batch, contains) a JSON-RPC response: a
 * client's answer to a request of the server, such as the approval question
 * (`elicitation/create`) a prompted command waits on. Answering "accept"
 * runs that command, so it needs what running does.
 */
export function containsResponses(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) =>
    isRecord(message) && !("method" in message) && ("result" in message || "error" in message)
  );
}

/** True when the body is (or, in a batch, contains) an `initialize` request. */
export function containsInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => isRecord(message) && message.method === "initialize");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
