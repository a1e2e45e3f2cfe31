/**
 * The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the
 * 2026-07-28 face: the wire, and nothing about what a task runs. A
 * {@link TaskRunner} owns the tasks (htmcp's is the job store,
 * `job_tasks.ts`; the conformance tests mount fixture tools); this module
 * decides when a `tools/call` may answer with a task, shapes every message
 * as the SEP words it, and answers `tasks/get`, `tasks/update` and
 * `tasks/cancel`.
 *
 * SDK v2 2.4.0 has no runtime for the extension: its 2026 codec deletes the
 * v1 `capabilities.tasks` and `execution` fields, and validates a
 * `tools/call` result as a tool result. So the capability is declared under
 * `capabilities.extensions`, the task methods are registered with explicit
 * schemas (the SDK admits `tasks/get` and `tasks/cancel` on the 2026 era
 * only that way), and {@link TaskCapableServer} lets a `CreateTaskResult`
 * past the tool-result validation, which would otherwise reject it.
 *
 * Deny on failure: a request that did not declare the extension gets no
 * task and no task method (`-32021`); a task id the runner does not know for
 * this caller is `-32602`, in the same words for absent, expired and
 * another caller's.
 *
 * @module
 */
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type JSONRPCRequest,
  ProtocolError,
  type Result,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import * as z from "zod";

/** The extension's identifier, as capabilities name it. */
export const TASKS_EXTENSION_ID = "io.modelcontextprotocol/tasks";

/** SEP-2575's Missing Required Client Capability. */
export const MISSING_CLIENT_CAPABILITY = -32021;

/** The v1 key SEP-2663 forbids on an inlined result (the task id is at the root). */
const RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task";

/** The statuses of SEP-2663's Task. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** How a tool may run: only as a task, or as a task when the server so decides. */
export type TaskSupport = "required" | "optional";

/** A task as its runner sees it; the wire shapes are made from this. */
export interface TaskSnapshot {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly createdAtMs: number;
  readonly lastUpdatedAtMs: number;
  /** How long the task stays readable after it ends (integer ms). */
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  readonly statusMessage?: string;
  /** The tool's own result, once `completed` (a tool error is `isError`, still completed). */
  readonly result?: CallToolResult;
  /** A protocol-level failure, once `failed`. */
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown };
  /** Requests the task waits on, while `input_required`. */
  readonly inputRequests?: Readonly<Record<string, unknown>>;
}

/** What a call of a task-supporting tool came to. */
export type TaskCallOutcome =
  | { readonly kind: "complete"; readonly result: CallToolResult }
  | { readonly kind: "task"; readonly task: TaskSnapshot };

/** One `tools/call` as the runner is given it. */
export interface TaskToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

/** Who owns and runs the tasks. Every method answers for the caller of `ctx` only. */
export interface TaskRunner {
  /** The task support of a tool, or undefined when it never runs as a task. */
  taskSupport(tool: string): TaskSupport | undefined;
  /**
   * Runs a call of a task-supporting tool for a client that negotiated the
   * extension: the complete result when it is at hand, else the task.
   * `plain` runs the call as it would run without tasks, through every
   * check the SDK makes of a tool call and its result; a complete result
   * the runner makes itself instead is sent as it is.
   */
  call(
    call: TaskToolCall,
    ctx: ServerContext,
    plain: () => Promise<CallToolResult>,
  ): Promise<TaskCallOutcome>;
  /** The caller's task, or null when it has none by that id. */
  get(taskId: string, ctx: ServerContext): Promise<TaskSnapshot | null>;
  /** Cancels the caller's task (an ended one stays as it is); false when it has none by that id. */
  cancel(taskId: string, ctx: ServerContext): Promise<boolean>;
  /** Delivers input responses to the caller's task; false when it has none by that id. */
  update(
    taskId: string,
    inputResponses: Readonly<Record<string, unknown>>,
    ctx: ServerContext,
  ): Promise<boolean>;
}

/** The server capabilities that announce the extension (and no v1 `tasks`). */
export const TASKS_CAPABILITY = Object.freeze({
  extensions: { [TASKS_EXTENSION_ID]: {} },
});

/**
 * True when the request declared the extension in its per-request client
 * capabilities. SEP-2575 puts a client's capabilities in every request's
 * `_meta`, so this is decided per request, never per connection.
 */
export function negotiatedTasks(ctx: ServerContext): boolean {
  const envelope: Readonly<Record<string, unknown>> = ctx.mcpReq.envelope ?? {};
  const capabilities = envelope[CLIENT_CAPABILITIES_META_KEY];
  if (!isRecord(capabilities) || !isRecord(capabilities.extensions)) return false;
  return Object.hasOwn(capabilities.extensions, TASKS_EXTENSION_ID) &&
    isRecord(capabilities.extensions[TASKS_EXTENSION_ID]);
}

function missingCapability(what: string): ProtocolError {
  // SEP-2663: "the server MUST return an error with the code -32021 ...,
  // indicating the required extension in the error response".
  return new ProtocolError(
    MISSING_CLIENT_CAPABILITY,
    `${what} needs the client capability ${TASKS_EXTENSION_ID}.`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } },
  );
}

function unknownTask(taskId: string): ProtocolError {
  return new ProtocolError(-32602, `Task not found: ${taskId}`);
}

/** The fields every Task carries (integer ms, ISO times, SEP-2663 names). */
function taskFields(task: TaskSnapshot): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: task.status,
    createdAt: new Date(task.createdAtMs).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAtMs).toISOString(),
    ttlMs: Math.max(1, Math.round(task.ttlMs)),
    pollIntervalMs: Math.max(1, Math.round(task.pollIntervalMs)),
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
  };
}

/**
 * The flat `CreateTaskResult` (`Result & Task`): no `task` wrapper, and no
 * `result`, `error`, `inputRequests` or `requestState`, which live on
 * `tasks/get` or nowhere.
 */
export function createTaskResult(task: TaskSnapshot): Result {
  return { resultType: "task", ...taskFields(task) } as Result;
}

/** `tasks/get`'s DetailedTask: the result inlined once completed, the error once failed. */
export function detailedTask(task: TaskSnapshot): Result {
  const detailed: Record<string, unknown> = { resultType: "complete", ...taskFields(task) };
  if (task.status === "completed" && task.result !== undefined) {
    detailed.result = withoutRelatedTaskMeta(task.result);
  }
  if (task.status === "failed") {
    detailed.error = task.error ?? { code: -32603, message: "The task failed." };
  }
  if (task.status === "input_required" && task.inputRequests !== undefined) {
    detailed.inputRequests = task.inputRequests;
  }
  return detailed as Result;
}

function withoutRelatedTaskMeta(result: CallToolResult): CallToolResult {
  const meta = result._meta;
  if (!isRecord(meta) || !Object.hasOwn(meta, RELATED_TASK_META_KEY)) return result;
  const { [RELATED_TASK_META_KEY]: _dropped, ...rest } = meta;
  return { ...result, _meta: rest };
}

/** The empty ack of `tasks/cancel` and `tasks/update`. */
const ACK: Result = Object.freeze({ resultType: "complete" }) as Result;

const TaskIdParams = z.looseObject({ taskId: z.string().min(1) });
const UpdateParams = z.looseObject({
  taskId: z.string().min(1),
  inputResponses: z.record(z.string(), z.unknown()).optional(),
});

/**
 * Registers `tasks/get`, `tasks/update` and `tasks/cancel` on `server`
 * (which must have been created with {@link TASKS_CAPABILITY}). `tasks/list`
 * and `tasks/result` stay unregistered: SEP-2663 removed them, and the SDK
 * answers them `-32601`.
 */
export function mountTasksExtension(server: Server, runner: TaskRunner): void {
  server.setRequestHandler("tasks/get", { params: TaskIdParams }, async (params, ctx) => {
    if (!negotiatedTasks(ctx)) throw missingCapability("tasks/get");
    const task = await runner.get(params.taskId, ctx);
    if (task === null) throw unknownTask(params.taskId);
    return detailedTask(task);
  });
  server.setRequestHandler("tasks/update", { params: UpdateParams }, async (params, ctx) => {
    if (!negotiatedTasks(ctx)) throw missingCapability("tasks/update");
    // The SDK lifts `inputResponses` (the MRTR field) out of the params
    // before a handler sees them; a well-formed map is on the context.
    const responses = params.inputResponses ?? ctx.mcpReq.inputResponses;
    if (responses === undefined) {
      throw new ProtocolError(-32602, "tasks/update needs an inputResponses object.");
    }
    if (!(await runner.update(params.taskId, responses, ctx))) {
      throw unknownTask(params.taskId);
    }
    return ACK;
  });
  server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, async (params, ctx) => {
    if (!negotiatedTasks(ctx)) throw missingCapability("tasks/cancel");
    // SEP-2663: cancelling a terminal task is the same empty ack; -32602 is
    // for unknown ids only.
    if (!(await runner.cancel(params.taskId, ctx))) throw unknownTask(params.taskId);
    return ACK;
  });
}

/**
 * A `tools/call` through the extension: a tool without task support, or a
 * request that did not negotiate the extension, runs `plain` (a task-only
 * tool is refused `-32021` then); otherwise the runner decides, and a task
 * is answered as a flat `CreateTaskResult`.
 */
export async function callWithTasks(
  runner: TaskRunner,
  call: TaskToolCall,
  ctx: ServerContext,
  plain: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const support = runner.taskSupport(call.name);
  if (support === undefined) return await plain();
  if (!negotiatedTasks(ctx)) {
    if (support === "required") throw missingCapability(`Tool ${call.name}`);
    return await plain();
  }
  const outcome = await runner.call(call, ctx, plain);
  if (outcome.kind === "complete") return outcome.result;
  return createTaskResult(outcome.task) as unknown as CallToolResult;
}

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/**
 * An SDK v2 `Server` that serves the Tasks extension for `runner`: it
 * declares {@link TASKS_CAPABILITY}, mounts the task methods, and sends
 * every `tools/call` through {@link callWithTasks}. Without a runner it is
 * the plain `Server`.
 *
 * The SDK validates a `tools/call` result as a tool result, which a
 * `CreateTaskResult` (no `content`, `resultType: "task"`) is not; so a task
 * leaves the validated path before that check, and every other result
 * still takes it, unchanged. The 2026 encoder admits `resultType: "task"`
 * on `tools/call` as it stands.
 */
export class TaskCapableServer extends Server {
  readonly #runner: TaskRunner | undefined;

  constructor(
    info: ConstructorParameters<typeof Server>[0],
    options: NonNullable<ConstructorParameters<typeof Server>[1]>,
    runner?: TaskRunner,
  ) {
    super(
      info,
      runner === undefined ? options : {
        ...options,
        capabilities: { ...options.capabilities, ...TASKS_CAPABILITY },
      },
    );
    this.#runner = runner;
    if (runner !== undefined) mountTasksExtension(this, runner);
  }

  protected override _wrapHandler(method: string, handler: Handler): Handler {
    if (method !== "tools/call") return super._wrapHandler(method, handler);
    const checked = super._wrapHandler(method, handler);
    return async (request, ctx) => {
      // Read at call time: the constructor of `Server` wraps handlers
      // (ping) before this class's fields exist.
      const runner = this.#runner;
      if (runner === undefined) return await checked(request, ctx);
      const params = isRecord(request.params) ? request.params : {};
      const call = {
        name: typeof params.name === "string" ? params.name : "",
        arguments: isRecord(params.arguments) ? params.arguments : {},
      };
      return await callWithTasks(runner, call, ctx, async () => {
        return await checked(request, ctx) as CallToolResult;
      }) as Result;
    };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
