/**
 * `htmcp audit show FILE` and `htmcp audit tail [-f] [-n N] FILE`: the audit
 * log as a table for people (time, caller, tool, command, verdict or code,
 * exit, duration), or one JSON object per call with `--json` for scripts.
 * Colour only when stdout is a terminal (and not with `--no-color`).
 *
 * The command column is text a model chose: every control character in it
 * is printed escaped (`\x1b`), so a logged command cannot move the cursor,
 * rewrite earlier lines or retitle the operator's terminal.
 *
 * `tail -f` follows the file as it grows, by polling its size; when the path
 * names a new file (its inode changed: logrotate's `create`, a rename) the
 * old file is read to its end and the new one from its start, and when the
 * file shrank (`copytruncate`) it is read again from its start.
 *
 * @module
 */
import { sleep } from "../timers/mod.ts";
import { parseArgs, type ParsedArgs } from "./args.ts";
import {
  CallAssembler,
  type CallRow,
  parseLine,
  type ReadStats,
  recordsFrom,
} from "./audit_calls.ts";
import { buildFilter, FILTER_SWITCHES, FILTER_VALUES, type RowFilter } from "./audit_filter.ts";

/** How often `tail -f` looks at the file. */
const FOLLOW_INTERVAL_MS = 200;
const COMMAND_WIDTH = 60;

/** Prints rows as a table or as JSON lines. */
export class RowPrinter {
  readonly #json: boolean;
  readonly #colour: boolean;
  readonly #write: (line: string) => void;
  #header = false;

  constructor(json: boolean, colour: boolean, write: (line: string) => void) {
    this.#json = json;
    this.#colour = colour;
    this.#write = write;
  }

  print(row: CallRow): void {
    if (this.#json) {
      this.#write(JSON.stringify({
        time: row.time,
        seq: row.seq,
        call_id: row.callId,
        client: row.client,
        tool: row.tool,
        command: row.command,
        verdict: row.verdict,
        code: row.code,
        exit_code: row.exitCode,
        duration_ms: row.durationMs,
      }));
      return;
    }
    if (!this.#header) {
      this.#header = true;
      this.#write(this.#line(["TIME (UTC)", "CALLER", "TOOL", "COMMAND", "RESULT", "EXIT", "MS"]));
    }
    const cells = [
      row.time.replace("T", " ").replace(/\.\d+Z$|Z$/, ""),
      row.client,
      row.tool,
      printable(row.command),
      resultLabel(row),
      row.exitCode === null ? "-" : String(row.exitCode),
      row.durationMs === null ? "-" : String(Math.round(row.durationMs)),
    ];
    this.#write(this.#line(cells, this.#colour ? resultColour(row) : 0));
  }

  /** The cells padded to their columns; the result cell coloured with SGR `colour` (0: none). */
  #line(cells: readonly string[], colour = 0): string {
    return cells.map((cell, i) => {
      const width = WIDTHS[i]!;
      const cut = cell.length > width && i === 3 ? cell.slice(0, width - 1) + "…" : cell;
      const padded = i === cells.length - 1 ? cut : cut.padEnd(width);
      return i === 4 && colour !== 0 ? `\x1b[${colour}m${padded}\x1b[0m` : padded;
    }).join(" ");
  }
}

const WIDTHS = [19, 16, 16, COMMAND_WIDTH, 24, 4, 6];

function resultLabel(row: CallRow): string {
  if (row.verdict === "deny") return `deny ${row.code ?? ""}`.trim();
  if (row.explain) return `explain ${row.code ?? ""}`.trim();
  return row.code ?? "no outcome";
}

/** Red for refusals, green for OK, yellow for any other ending. */
function resultColour(row: CallRow): number {
  if (row.verdict === "deny") return 31;
  return row.code === "OK" || row.explain ? 32 : 33;
}

/** `text` with every control character (C0, DEL, C1) escaped: safe to print on a terminal. */
export function printable(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\t") return "\\t";
    return `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;
  });
}

const SHOW_SPEC = {
  values: [...FILTER_VALUES, "-n"],
  switches: [...FILTER_SWITCHES, "--json", "--no-color", "-f", "--follow"],
};

interface Prepared {
  /** The files in the order given: a rotated series, oldest first. */
  readonly files: readonly string[];
  readonly filter: RowFilter;
  readonly printer: RowPrinter;
  readonly args: ParsedArgs;
}

function prepare(verb: string, argv: readonly string[]): Prepared | string {
  const parsed = parseArgs(argv, SHOW_SPEC);
  if (!parsed.ok) return parsed.message;
  const args = parsed.args;
  const files = args.positionals;
  if (files.length === 0 || (verb === "tail" && files.length > 1)) {
    return `Usage: htmcp audit ${verb} ${verb === "tail" ? "FILE" : "FILE..."} [filters]`;
  }
  if (verb === "show" && (args.switches.has("-f") || args.values.has("-n"))) {
    return "-f and -n belong to htmcp audit tail.";
  }
  const built = buildFilter(args);
  if (!built.ok) return built.message;
  const colour = !args.switches.has("--json") && !args.switches.has("--no-color") &&
    Deno.stdout.isTerminal();
  const encoder = new TextEncoder();
  const printer = new RowPrinter(
    args.switches.has("--json"),
    colour,
    (line) => writeAllSync(encoder.encode(line + "\n")),
  );
  return { files, filter: built.filter, printer, args };
}

function writeAllSync(bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
}

function reportUnreadable(stats: ReadStats): void {
  if (stats.unreadable > 0) {
    console.error(`${stats.unreadable} of ${stats.lines} lines were not audit records.`);
  }
}

async function openLog(file: string): Promise<Deno.FsFile | string> {
  try {
    return await Deno.open(file, { read: true });
  } catch (error) {
    return `Cannot read the audit log "${file}": ${(error as Error).message}`;
  }
}

/**
 * `htmcp audit show FILE... [filters] [--json]`: several files are read in
 * the order given as one log (a rotated series, oldest first), so a call
 * whose outcome landed in the next file is still one row.
 *
 * @returns the exit code
 */
export async function runShow(argv: readonly string[]): Promise<number> {
  const prepared = prepare("show", argv);
  if (typeof prepared === "string") return usage(prepared);
  const stats: ReadStats = { bytes: 0, lines: 0, unreadable: 0 };
  const calls = new CallAssembler();
  const emit = (row: CallRow) => {
    if (prepared.filter(row)) prepared.printer.print(row);
  };
  try {
    for (const file of prepared.files) {
      const log = await openLog(file);
      if (typeof log === "string") return failure(log);
      for await (const record of recordsFrom(log.readable, stats)) calls.add(record).forEach(emit);
    }
    calls.finish().forEach(emit);
  } catch (error) {
    // `htmcp audit show log | head`: the reader left; that is not a failure.
    if (error instanceof Deno.errors.BrokenPipe) return 0;
    throw error;
  }
  reportUnreadable(stats);
  return 0;
}

/** `htmcp audit tail [-f] [-n N] FILE [filters] [--json]`. @returns the exit code */
export async function runTail(argv: readonly string[]): Promise<number> {
  const prepared = prepare("tail", argv);
  if (typeof prepared === "string") return usage(prepared);
  const count = Number(prepared.args.values.get("-n") ?? "10");
  if (!Number.isSafeInteger(count) || count < 0) return usage(`-n needs a whole number of rows.`);
  const follow = prepared.args.switches.has("-f") || prepared.args.switches.has("--follow");
  const file = prepared.files[0]!;
  const log = await openLog(file);
  if (typeof log === "string") return failure(log);
  const stats: ReadStats = { bytes: 0, lines: 0, unreadable: 0 };
  const calls = new CallAssembler();
  // The last `count` matching rows of what is there now.
  const last: CallRow[] = [];
  const keep = (row: CallRow) => {
    if (!prepared.filter(row)) return;
    last.push(row);
    if (last.length > count) last.shift();
  };
  const info = await log.stat();
  const reader = new LineReader(log);
  for (const record of await reader.readAvailable(stats)) calls.add(record).forEach(keep);
  if (!follow) {
    calls.finish().forEach(keep);
    log.close();
    last.forEach((row) => prepared.printer.print(row));
    reportUnreadable(stats);
    return 0;
  }
  last.forEach((row) => prepared.printer.print(row));
  const emit = (row: CallRow) => {
    if (prepared.filter(row)) prepared.printer.print(row);
  };
  await follow_(file, reader, info.ino, calls, emit, stats);
  return 0;
}

/**
 * Follows `file` forever (until the process is ended): polls, reads what
 * was appended, reopens on rotation or truncation.
 */
async function follow_(
  file: string,
  first: LineReader,
  firstIno: number | null,
  calls: CallAssembler,
  emit: (row: CallRow) => void,
  stats: ReadStats,
): Promise<never> {
  let reader = first;
  let ino = firstIno;
  for (;;) {
    await sleep(FOLLOW_INTERVAL_MS);
    let now: Deno.FileInfo;
    try {
      now = await Deno.stat(file);
    } catch {
      continue; // between a rename and the new file's creation
    }
    if (now.ino !== ino) {
      // Rotated: finish the old file, then start the new one from its beginning.
      for (const record of await reader.readAvailable(stats)) calls.add(record).forEach(emit);
      reader.close();
      const opened = await openLog(file);
      if (typeof opened === "string") continue;
      reader = new LineReader(opened);
      ino = now.ino;
    } else if (now.size < reader.position) {
      // Truncated in place (copytruncate): what is there now is new.
      reader.rewind();
    }
    for (const record of await reader.readAvailable(stats)) calls.add(record).forEach(emit);
  }
}

/** Reads complete lines from an open file, from where the last read stopped. */
class LineReader {
  readonly #file: Deno.FsFile;
  readonly #buffer = new Uint8Array(64 * 1024);
  #decoder = new TextDecoder();
  #carry = "";
  position = 0;

  constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  rewind(): void {
    this.position = 0;
    this.#carry = "";
    this.#decoder = new TextDecoder();
  }

  close(): void {
    this.#file.close();
  }

  /** Records in every complete line appended since the last call; a line being written waits. */
  async readAvailable(stats: ReadStats): Promise<Record<string, unknown>[]> {
    await this.#file.seek(this.position, Deno.SeekMode.Start);
    const records: Record<string, unknown>[] = [];
    for (;;) {
      const n = await this.#file.read(this.#buffer);
      if (n === null || n === 0) break;
      this.position += n;
      stats.bytes += n;
      const text = this.#carry +
        this.#decoder.decode(this.#buffer.subarray(0, n), { stream: true });
      let start = 0;
      for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
        const record = parseLine(text.slice(start, end), stats);
        if (record !== null) records.push(record);
        start = end + 1;
      }
      this.#carry = text.slice(start);
    }
    return records;
  }
}

function usage(message: string): number {
  console.error(message);
  return 2;
}

function failure(message: string): number {
  console.error(message);
  return 1;
}
