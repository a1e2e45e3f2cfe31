/**
 * A test-only MCP server that mounts htmcp's Tasks extension module
 * (`src/protocol/tasks_extension.ts`, the same code `run_command` is served
 * through) with the fixture tools the conformance suite's `tasks-*`
 * scenarios call: `greet`, `slow_compute`, `failing_job`,
 * `protocol_error_job`, `confirm_delete`, `multi_input` and
 * `test_tool_with_task`. A security server ships none of them; they exist so
 * the real suite can check the module's wire. Served over the SDK's own
 * 2026-07-28 HTTP handler on 127.0.0.1, one server instance per request
 * (as htmcp's HTTP era does), all sharing one in-memory task table.
 */
import {
  type CallToolResult,
  createMcpHandler,
  type ServerContext,
} from "@modelcontextprotocol/server";
import {
  type TaskCallOutcome,
  TaskCapableServer,
  type TaskRunner,
  type TaskSnapshot,
  type TaskSupport,
} from "../../src/protocol/tasks_extension.ts";

interface FixtureTask {
  snapshot: TaskSnapshot;
  timer?: ReturnType<typeof setTimeout>;
  /** Keys of input requests not answered yet (an input_required task). */
  pending?: Map<string, unknown>;
  /** What the task does once its inputs are in. */
  onInputs?: (answers: Map<string, unknown>) => CallToolResult;
  answers?: Map<string, unknown>;
}

const SUPPORT: Readonly<Record<string, TaskSupport>> = {
  __proto__: null,
  slow_compute: "optional",
  failing_job: "required",
  protocol_error_job: "optional",
  confirm_delete: "optional",
  multi_input: "optional",
  test_tool_with_task: "required",
} as unknown as Record<string, TaskSupport>;

const text = (value: string, isError = false): CallToolResult => ({
  content: [{ type: "text", text: value }],
  ...(isError ? { isError: true } : {}),
});

function elicit(message: string, field: string) {
  return {
    method: "elicitation/create",
    params: {
      mode: "form",
      message,
      requestedSchema: { type: "object", properties: { [field]: { type: "string" } } },
    },
  };
}

/** The fixture's tasks: one table for every server instance of the process. */
export class FixtureTasks implements TaskRunner {
  readonly #tasks = new Map<string, FixtureTask>();

  taskSupport(tool: string): TaskSupport | undefined {
    return SUPPORT[tool];
  }

  #create(): FixtureTask {
    const now = Date.now();
    const task: FixtureTask = {
      snapshot: {
        taskId: `fixture-${crypto.randomUUID()}`,
        status: "working",
        createdAtMs: now,
        lastUpdatedAtMs: now,
        ttlMs: 60_000,
        pollIntervalMs: 100,
      },
    };
    this.#tasks.set(task.snapshot.taskId, task);
    return task;
  }

  #settle(task: FixtureTask, change: Partial<TaskSnapshot>): void {
    if (["completed", "failed", "cancelled"].includes(task.snapshot.status)) return;
    task.snapshot = { ...task.snapshot, ...change, lastUpdatedAtMs: Date.now() };
  }

  #after(task: FixtureTask, ms: number, change: () => Partial<TaskSnapshot>): void {
    task.timer = setTimeout(() => this.#settle(task, change()), ms);
  }

  #awaiting(task: FixtureTask, requests: Record<string, unknown>, done: FixtureTask["onInputs"]) {
    task.pending = new Map(Object.entries(requests));
    task.answers = new Map();
    if (done !== undefined) task.onInputs = done;
    task.snapshot = { ...task.snapshot, status: "input_required", inputRequests: requests };
  }

  call(
    call: { name: string; arguments: Record<string, unknown> },
    ctx: ServerContext,
    plain: () => Promise<CallToolResult>,
  ): Promise<TaskCallOutcome> {
    const args = call.arguments;
    switch (call.name) {
      case "slow_compute": {
        const seconds = Number(args.seconds ?? 0);
        // SEP-2663 lets a server answer a fast call at once, without a task.
        if (seconds <= 0) return plain().then((result) => ({ kind: "complete", result }));
        const task = this.#create();
        this.#after(task, seconds * 1000, () => ({
          status: "completed",
          result: text(`Computed ${String(args.label ?? "")} after ${seconds}s`),
        }));
        return Promise.resolve({ kind: "task", task: task.snapshot });
      }
      case "failing_job": {
        const task = this.#create();
        this.#after(task, 1000, () => ({
          status: "completed",
          result: text("The job failed.", true),
        }));
        return Promise.resolve({ kind: "task", task: task.snapshot });
      }
      case "protocol_error_job": {
        const task = this.#create();
        this.#after(task, 200, () => ({
          status: "failed",
          error: { code: -32603, message: "The job crashed." },
        }));
        return Promise.resolve({ kind: "task", task: task.snapshot });
      }
      case "confirm_delete": {
        const task = this.#create();
        this.#awaiting(
          task,
          { confirm: elicit(`Delete ${String(args.filename)}?`, "confirm") },
          () => text(`Deleted ${String(args.filename)}`),
        );
        return Promise.resolve({ kind: "task", task: task.snapshot });
      }
      case "multi_input": {
        const task = this.#create();
        this.#awaiting(task, {
          first: elicit("First name?", "name"),
          second: elicit("Second name?", "name"),
        }, () => text("Both inputs received"));
        return Promise.resolve({ kind: "task", task: task.snapshot });
      }
      case "test_tool_with_task": {
        const answer = ctx.mcpReq.inputResponses?.["user_name"] as
          | { content?: { name?: unknown } }
          | undefined;
        if (answer === undefined) {
          // Round one of the multi round-trip: ask, create nothing yet.
          return Promise.resolve({
            kind: "complete",
            result: {
              resultType: "input_required",
              inputRequests: { user_name: elicit("Your name?", "name") },
            } as unknown as CallToolResult,
          });
        }
        const task = this.#create();
        const name = String(answer.content?.name ?? "");
        this.#after(task, 100, () => ({ status: "completed", result: text(`Hello, ${name}!`) }));
        return Promise.resolve({ kind: "task", task: task.snapshot });
      }
    }
    return plain().then((result) => ({ kind: "complete", result }));
  }

  /** Stops every timer (the test's resource check wants none left). */
  dispose(): void {
    for (const task of this.#tasks.values()) clearTimeout(task.timer);
  }

  get(taskId: string): Promise<TaskSnapshot | null> {
    return Promise.resolve(this.#tasks.get(taskId)?.snapshot ?? null);
  }

  cancel(taskId: string): Promise<boolean> {
    const task = this.#tasks.get(taskId);
    if (task === undefined) return Promise.resolve(false);
    clearTimeout(task.timer);
    this.#settle(task, { status: "cancelled" });
    return Promise.resolve(true);
  }

  update(taskId: string, responses: Readonly<Record<string, unknown>>): Promise<boolean> {
    const task = this.#tasks.get(taskId);
    if (task === undefined) return Promise.resolve(false);
    const pending = task.pending;
    if (pending === undefined || task.snapshot.status !== "input_required") {
      return Promise.resolve(true);
    }
    for (const [key, value] of Object.entries(responses)) {
      if (!pending.has(key)) continue;
      pending.delete(key);
      task.answers?.set(key, value);
    }
    if (pending.size > 0) {
      task.snapshot = {
        ...task.snapshot,
        inputRequests: Object.fromEntries(pending),
        lastUpdatedAtMs: Date.now(),
      };
    } else {
      const { inputRequests: _done, ...rest } = task.snapshot;
      task.snapshot = { ...rest, status: "working", lastUpdatedAtMs: Date.now() };
      const finish = task.onInputs;
      this.#after(task, 100, () => ({
        status: "completed",
        result: finish === undefined ? text("done") : finish(task.answers ?? new Map()),
      }));
    }
    return Promise.resolve(true);
  }
}

const TOOLS = [
  { name: "greet", description: "Says hello (sync only)." },
  { name: "slow_compute", description: "Sleeps `seconds`, then answers." },
  { name: "failing_job", description: "Ends with a tool error." },
  { name: "protocol_error_job", description: "Ends with a protocol error." },
  { name: "confirm_delete", description: "Asks for a confirmation." },
  { name: "multi_input", description: "Asks two questions at once." },
  { name: "test_tool_with_task", description: "Asks a name, then runs as a task." },
].map((tool) => ({ ...tool, inputSchema: { type: "object" as const } }));

/** One fixture server instance over `tasks`. */
export function fixtureServer(tasks: FixtureTasks): TaskCapableServer {
  const server = new TaskCapableServer(
    { name: "htmcp-tasks-fixture", version: "1.0.0" },
    { capabilities: { tools: { listChanged: false } } },
    tasks,
  );
  server.setRequestHandler("tools/list", () => ({ tools: TOOLS }));
  server.setRequestHandler("tools/call", async (request) => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    switch (request.params.name) {
      case "greet":
        return text(`Hello, ${String(args.name ?? "")}!`);
      case "slow_compute": {
        const seconds = Math.min(Number(args.seconds ?? 0), 5);
        await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
        return text(`Computed ${String(args.label ?? "")} after ${seconds}s`);
      }
      case "protocol_error_job":
        return text("The job crashed.", true);
      default:
        return text(`No such tool: ${request.params.name}`, true);
    }
  });
  return server;
}

/** Serves the fixture on 127.0.0.1 (a free port) until `close`. */
export function serveFixture(): { url: string; close: () => Promise<void> } {
  const tasks = new FixtureTasks();
  const handler = createMcpHandler(() => fixtureServer(tasks), { legacy: "reject" });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => handler.fetch(request),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    close: async () => {
      tasks.dispose();
      await server.shutdown();
    },
  };
}
