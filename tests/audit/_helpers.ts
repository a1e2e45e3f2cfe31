/**
 * Shared pieces of the audit tests: field builders, a temp-folder wrapper and
 * a runner for the real Deno subprocess fixtures in `_fixtures/`.
 */
import type { AttemptFields, ExplainFields, OutcomeFields } from "../../src/audit/mod.ts";

/** Redaction switched off, for tests that are not about redaction. */
export const noRedaction = (text: string): string => text;

export function attemptFields(overrides: Partial<AttemptFields> = {}): AttemptFields {
  return {
    call_id: crypto.randomUUID(),
    tool: "run_command",
    client_id: null,
    command_raw: "ls -la",
    argv: ["ls", "-la"],
    cwd: "/srv/jail",
    verdict: "allow",
    code: null,
    reason: 'The command "ls" is allowlisted.',
    ...overrides,
  };
}

export function outcomeFields(overrides: Partial<OutcomeFields> = {}): OutcomeFields {
  return {
    call_id: crypto.randomUUID(),
    tool: "run_command",
    client_id: null,
    code: "OK",
    exit_code: 0,
    duration_ms: 4,
    stdout_bytes: 120,
    stderr_bytes: 0,
    truncated: false,
    ...overrides,
  };
}

export function explainFields(overrides: Partial<ExplainFields> = {}): ExplainFields {
  return {
    call_id: crypto.randomUUID(),
    tool: "explain_command",
    client_id: null,
    command_raw: "rm -rf /",
    argv: ["rm", "-rf", "/"],
    verdict: "deny",
    code: "POLICY_DENIED",
    reason: 'Cannot run "rm": it is on the denylist.',
    ...overrides,
  };
}

/** Runs `fn` with a fresh temp folder, removed afterwards. */
export async function withTempDir<T = void>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "htmcp_audit_" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The log's lines, without the empty string after the final newline. */
export async function readLines(path: string): Promise<string[]> {
  const text = await Deno.readTextFile(path);
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** The log's records, parsed. */
export async function readRecords(path: string): Promise<Record<string, unknown>[]> {
  return (await readLines(path)).map((line) => JSON.parse(line));
}

/** Absolute path of a fixture script. */
export function fixture(name: string): string {
  return new URL(`./_fixtures/${name}`, import.meta.url).pathname;
}

/** Whether `bin` runs here (`bin --version` exits 0). */
export function hasTool(bin: string): boolean {
  try {
    return new Deno.Command(bin, { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a fixture with `deno run` and the given permission flags, optionally
 * behind a wrapper command line (`bwrap ...`, `strace ...`).
 */
export async function runFixture(
  name: string,
  args: readonly string[],
  options: { readonly permissions: readonly string[]; readonly wrapper?: readonly string[] },
): Promise<Ran> {
  const denoArgs = ["run", "--no-prompt", ...options.permissions, fixture(name), ...args];
  const wrapper = options.wrapper ?? [];
  const command = wrapper.length > 0
    ? new Deno.Command(wrapper[0]!, { args: [...wrapper.slice(1), Deno.execPath(), ...denoArgs] })
    : new Deno.Command(Deno.execPath(), { args: denoArgs });
  const output = await command.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}
