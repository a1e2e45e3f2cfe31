/**
 * The operator log: one line per event on stderr, as text for a person or
 * JSON for journald and container log collectors (`[log] format`), filtered
 * by `[log] level`.
 *
 * stdout is the MCP channel in stdio mode, so nothing here ever writes to it.
 * Callers pass codes, counts, ids and already-redacted text only: this module
 * is a sink, it never sees command output, and it does not redact (the
 * caller that holds the arguments does, with the policy's redactor).
 *
 * One logger per process (per Worker, in the self-confined mode): `serve`
 * configures it once the policy is loaded; until then it writes text at
 * level info.
 *
 * @module
 */
import type { LogLevel, LogSettings } from "../config/types.ts";
import { BoundedLines } from "./bounded_lines.ts";
import type { ByteSink } from "../streams/mod.ts";

/** A field value: what a JSON line can carry without surprises. */
export type LogValue = string | number | boolean | null | undefined;

/** Named fields of one line; `undefined` values are left out. */
export type LogFields = Readonly<Record<string, LogValue>>;

const SEVERITY: Readonly<Record<LogLevel, number>> = Object.freeze({
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
});

/** How a level reads in text lines, as the CLI's messages always read. */
const TEXT_PREFIX: Readonly<Record<LogLevel, string>> = Object.freeze({
  debug: "debug: ",
  info: "",
  warn: "warning: ",
  error: "",
});

/** Keys the line itself owns; a field of the same name is dropped. */
const OWN_KEYS: ReadonlySet<string> = new Set(["time", "level", "event", "msg"]);

/** The operator logger. */
export interface Logger {
  /** Whether a line at `level` would be written (to skip building costly fields). */
  enabled(level: LogLevel): boolean;
  /**
   * Writes one line.
   *
   * @param level Its severity.
   * @param event A stable snake_case name (`tool_call`, `http_request`, `server_listening`).
   * @param message The sentence a person reads.
   * @param fields Named values, in the order given.
   */
  write(level: LogLevel, event: string, message: string, fields?: LogFields): void;
  /**
   * Writes a lifecycle line (the permission layer, the sandbox, where the
   * server listens, why it stopped) at level info whatever `[log] level`
   * says: there are a handful per run, and the listening line is the only
   * place a server started on port 0 tells its address.
   */
  lifecycle(event: string, message: string, fields?: LogFields): void;
}

/**
 * Builds a logger.
 *
 * @param settings Format and level.
 * @param sink Receives each finished line (default: stderr).
 * @param now The clock (tests).
 * @returns The logger.
 *
 * @example
 * ```ts
 * import { createLogger } from "./log.ts";
 * const lines: string[] = [];
 * const log = createLogger({ format: "json", level: "info" }, (line) => lines.push(line));
 * log.write("info", "server_listening", "serving MCP", { url: "http://127.0.0.1:8080/mcp" });
 * ```
 */
export function createLogger(
  settings: LogSettings,
  sink: (line: string) => void = (line) => console.error(line),
  now: () => Date = () => new Date(),
): Logger {
  const threshold = SEVERITY[settings.level];
  const render = rendererOf(settings);
  return Object.freeze({
    enabled: (level: LogLevel) => SEVERITY[level] >= threshold,
    write(level: LogLevel, event: string, message: string, fields: LogFields = {}) {
      if (SEVERITY[level] < threshold) return;
      sink(render(now().toISOString(), level, event, message, fields));
    },
    lifecycle(event: string, message: string, fields: LogFields = {}) {
      sink(render(now().toISOString(), "info", event, message, fields));
    },
  });
}

type Render = (
  time: string,
  level: LogLevel,
  event: string,
  message: string,
  fields: LogFields,
) => string;

function rendererOf(settings: LogSettings): Render {
  return settings.format === "json" ? renderJson : renderText;
}

function renderJson(
  time: string,
  level: LogLevel,
  event: string,
  message: string,
  fields: LogFields,
): string {
  const line: Record<string, LogValue> = { time, level, event, msg: message };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined && !OWN_KEYS.has(key)) line[key] = value;
  }
  return JSON.stringify(line);
}

/**
 * `TIME htmcp: [warning: ]MESSAGE key=value ...`: the CLI's own voice with a
 * time in front and the fields after it. A value with a blank, a quote, an
 * `=` or a control character is written as a JSON string, so a field can
 * never forge a second line or a second field.
 */
function renderText(
  time: string,
  level: LogLevel,
  _event: string,
  message: string,
  fields: LogFields,
): string {
  let line = `${time} htmcp: ${TEXT_PREFIX[level]}${oneLine(message)}`;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || OWN_KEYS.has(key)) continue;
    line += ` ${key}=${textValue(value)}`;
  }
  return line;
}

function textValue(value: Exclude<LogValue, undefined>): string {
  if (value === null) return "-";
  if (typeof value !== "string") return String(value);
  return value !== "" && /^[\x21-\x7e]+$/.test(value) && !/["=\\]/.test(value)
    ? value
    : JSON.stringify(value);
}

/** A message is one line: a control character becomes its escape. */
function oneLine(message: string): string {
  // deno-lint-ignore no-control-regex
  return message.replace(/[\x00-\x1f\x7f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

/**
 * A sink for modules that report whole `htmcp: ...` lines (the audit
 * writer, the SIGHUP handler, the policy watch): each becomes one operator
 * log line, `warning:` lines at warn, others at `plainLevel`.
 *
 * @param event The event name of the lines.
 * @param plainLevel The level of lines without `warning:`.
 * @returns A function taking one whole line, written to the logger in force
 *   when it is called (so a later `configureOperatorLog` applies).
 */
export function lineSink(event: string, plainLevel: LogLevel = "info"): (line: string) => void {
  return (line) => {
    const text = line.replace(/^htmcp: /, "");
    const warning = /^warning: /.exec(text);
    if (warning === null) current.write(plainLevel, event, text);
    else current.write("warn", event, text.slice(warning[0].length));
  };
}

/** What a server logs with before its policy is loaded. */
export const DEFAULT_LOG_SETTINGS: LogSettings = Object.freeze({ format: "text", level: "info" });

let current: Logger = createLogger(DEFAULT_LOG_SETTINGS);

/**
 * The process's operator logger: the one `configureOperatorLog` installed,
 * or the defaults before that.
 *
 * @returns The logger in force now.
 */
export function operatorLog(): Logger {
  return current;
}

/**
 * Installs the process's logger from the policy's `[log]` table.
 *
 * @param settings `policy.log`, or undefined for the defaults.
 * @param sink Where lines go (default: stderr, never stdout: that is the MCP
 *   channel in stdio mode).
 *
 * @example
 * ```ts
 * import type { Policy } from "../config/types.ts";
 * import { configureOperatorLog, operatorLog } from "./log.ts";
 * declare const policy: Policy;
 * configureOperatorLog(policy.log); // stderr, in the policy's format and level
 * operatorLog().lifecycle("server_start", "serving MCP over stdio");
 * ```
 */
export function configureOperatorLog(
  settings: LogSettings | undefined,
  sink?: (line: string) => void,
): void {
  current = createLogger(settings ?? DEFAULT_LOG_SETTINGS, sink);
}

/** Operator log bytes that may wait for a slow stderr reader before lines are dropped. */
const STDERR_BACKLOG_BYTES = 64 * 1024;

/**
 * Installs the process's logger from the policy's `[log]` table, writing to
 * stderr through a bounded queue (`BoundedLines`): what a server uses once
 * it starts serving, so a client that never reads the server's stderr
 * cannot freeze it (lines beyond the bound are dropped and counted, and a
 * `log_lines_dropped` warning says how many once the reader catches up).
 *
 * @param settings `policy.log`, or undefined for the defaults.
 * @param output Where the lines go (default: stderr).
 * @returns The queue; `flush` it before the process exits.
 */
export function queueOperatorLog(
  settings: LogSettings | undefined,
  output: ByteSink = Deno.stderr,
): BoundedLines {
  const chosen = settings ?? DEFAULT_LOG_SETTINGS;
  const render = rendererOf(chosen);
  const lines = new BoundedLines(output, STDERR_BACKLOG_BYTES, (count) =>
    render(
      new Date().toISOString(),
      "warn",
      "log_lines_dropped",
      `${count} operator log lines were dropped: nothing read the server's stderr.`,
      { dropped: count },
    ));
  current = createLogger(chosen, (line) => lines.write(line));
  return lines;
}
