/**
 * Reads untrusted tool arguments exactly once into a frozen snapshot.
 *
 * Threat: an argument object whose getter returns a harmless value to the
 * check and a dangerous one to the executor (time-of-check/time-of-use in
 * memory). Every later layer sees only the snapshot's primitive strings, which
 * cannot change, so what was checked is what runs.
 *
 * The command comes either as text (`command`, parsed by our tokenizer) or as
 * words (`argv`, one command taken word for word, never tokenized): exactly
 * one of the two, so no layer has to guess which one was judged.
 *
 * @module
 */

/** Longest command text accepted; longer input is refused before parsing. */
export const MAX_COMMAND_CHARS = 16_384;
/** Longest cwd text accepted. */
export const MAX_CWD_CHARS = 4_096;
/** Most words an `argv` may have. */
export const MAX_ARGV_WORDS = 1_024;
/** Largest `stdin` text accepted, in UTF-8 bytes (1 MiB). */
export const MAX_STDIN_BYTES = 1_048_576;

export interface CommandInput {
  /** The command text, or the words of one command (`argv`), frozen. */
  readonly command: string | readonly string[];
  /** The command as the audit's `command_raw` shows it: the text, or the argv as JSON. */
  readonly commandRaw: string;
  readonly cwd: string | undefined;
  /** The command's standard input as UTF-8 bytes; undefined = /dev/null. */
  readonly stdin: Uint8Array<ArrayBuffer> | undefined;
  /** The session to run in (its cwd, and a leading cd moves it), or undefined. */
  readonly sessionId: string | undefined;
  /** Return at once with a job id; the command runs on (`run_command` only). */
  readonly background: boolean;
  /** The command's own deadline in ms (bounded by `limits.max_timeout_ms` later), or undefined. */
  readonly timeoutMs: number | undefined;
}

export type SnapshotResult =
  | { readonly ok: true; readonly input: CommandInput }
  | { readonly ok: false; readonly reason: string };

type Field<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Copies an array of strings, reading `length` and each element once. */
function copyArgv(value: unknown): Field<readonly string[]> {
  if (!Array.isArray(value)) return { ok: false, reason: "The argv must be an array of strings." };
  const length: unknown = value.length;
  if (typeof length !== "number" || length < 1) {
    return { ok: false, reason: "The argv must hold at least the command word." };
  }
  if (length > MAX_ARGV_WORDS) {
    return {
      ok: false,
      reason: `The argv has ${length} words; the limit is ${MAX_ARGV_WORDS}.`,
    };
  }
  const words: string[] = [];
  let chars = 0;
  for (let index = 0; index < length; index++) {
    const word: unknown = value[index];
    if (typeof word !== "string") {
      return { ok: false, reason: `The argv word at index ${index} must be a string.` };
    }
    chars += word.length;
    if (chars > MAX_COMMAND_CHARS) {
      return {
        ok: false,
        reason: `The argv's words are longer than ${MAX_COMMAND_CHARS} characters in total.`,
      };
    }
    words.push(word);
  }
  return { ok: true, value: Object.freeze(words) };
}

function copyStdin(value: unknown): Field<Uint8Array<ArrayBuffer> | undefined> {
  if (value === undefined) return { ok: true, value: undefined };
  if (typeof value !== "string") {
    return { ok: false, reason: "The stdin must be a string when given." };
  }
  // Cheap pre-check before encoding: UTF-8 takes at least one byte per code unit.
  if (value.length > MAX_STDIN_BYTES) {
    return { ok: false, reason: `The stdin is longer than the limit of ${MAX_STDIN_BYTES} bytes.` };
  }
  const bytes = new TextEncoder().encode(value);
  if (bytes.length > MAX_STDIN_BYTES) {
    return {
      ok: false,
      reason: `The stdin is ${bytes.length} bytes long; the limit is ${MAX_STDIN_BYTES}.`,
    };
  }
  return { ok: true, value: bytes };
}

/**
 * Copies `command` or `argv`, `cwd` and `stdin` out of `raw`, reading each
 * property once.
 *
 * @param raw The arguments as the transport delivered them.
 * @returns The frozen snapshot, or why the arguments are unusable.
 */
export function snapshotCommandInput(raw: unknown): SnapshotResult {
  if (raw === null || typeof raw !== "object") {
    return { ok: false, reason: "The arguments must be an object with a command string." };
  }
  const record = raw as Record<string, unknown>;
  // One read per property: the values are held in locals from here on.
  const text = record["command"];
  const rawArgv = record["argv"];
  const cwd = record["cwd"];
  const rawStdin = record["stdin"];
  const sessionId = record["session_id"];
  const background = record["background"];
  const timeoutMs = record["timeout_ms"];
  if (background !== undefined && typeof background !== "boolean") {
    return { ok: false, reason: "The background flag must be true or false when given." };
  }
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !Number.isSafeInteger(timeoutMs) || timeoutMs < 1)
  ) {
    return { ok: false, reason: "The timeout_ms must be a positive integer when given." };
  }
  if (sessionId !== undefined && (typeof sessionId !== "string" || sessionId.length > 128)) {
    return { ok: false, reason: "The session_id must be a string of at most 128 characters." };
  }
  if (text !== undefined && rawArgv !== undefined) {
    return {
      ok: false,
      reason: 'Give either "command" (text) or "argv" (words), not both.',
    };
  }
  if (text === undefined && rawArgv === undefined) {
    return { ok: false, reason: 'Give "command" (text) or "argv" (words).' };
  }
  if (cwd !== undefined && typeof cwd !== "string") {
    return { ok: false, reason: "The cwd must be a string when given." };
  }
  if (cwd !== undefined && cwd.length > MAX_CWD_CHARS) {
    return {
      ok: false,
      reason: `The cwd is ${cwd.length} characters long; the limit is ${MAX_CWD_CHARS}.`,
    };
  }
  const stdin = copyStdin(rawStdin);
  if (!stdin.ok) return stdin;
  let command: string | readonly string[];
  let commandRaw: string;
  if (rawArgv !== undefined) {
    const argv = copyArgv(rawArgv);
    if (!argv.ok) return argv;
    command = argv.value;
    // JSON keeps word boundaries exact in the log; joining with spaces would not.
    commandRaw = JSON.stringify(argv.value);
  } else {
    if (typeof text !== "string") return { ok: false, reason: "The command must be a string." };
    if (text.length > MAX_COMMAND_CHARS) {
      return {
        ok: false,
        reason: `The command is ${text.length} characters long; the limit is ${MAX_COMMAND_CHARS}.`,
      };
    }
    command = text;
    commandRaw = text;
  }
  return {
    ok: true,
    input: Object.freeze({
      command,
      commandRaw,
      cwd,
      stdin: stdin.value,
      sessionId,
      background: background ?? false,
      timeoutMs,
    }),
  };
}
