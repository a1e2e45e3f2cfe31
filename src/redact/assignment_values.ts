/**
 * Which values of a secret-named key are secrets. Not every value is: help
 * text prints `--password PASSWORD`, `env` prints `PWD=/home/me`, source code
 * assigns `token = await getToken()`. These rules keep such values visible;
 * everything else, and every quoted literal, is hidden.
 *
 * @module
 */
import { isAwsSecretKeyName, isSecretKeyName } from "./secret_key_names.ts";

/** The outcome of reading a value: the part to hide (maybe empty) and where scanning resumes. */
export interface Value {
  readonly start: number;
  readonly end: number;
  readonly next: number;
  readonly quoted: boolean;
}

/** Words that say "no value here", not a secret. */
const NON_VALUES: ReadonlySet<string> = new Set([
  "null",
  "nil",
  "none",
  "true",
  "false",
  "undefined",
]);
/**
 * How help text names an argument: `--password PASSWORD`, `--token <token>`,
 * `--key {KEY}`, `--pass [PASS]`. Bracketed forms hold a plain word;
 * upper-case words count only when they name a secret or are a generic
 * placeholder, so an upper-case password (`--password HUNTER2`) is still
 * hidden.
 */
const BRACKETED_METAVAR =
  /^(?:<[A-Za-z0-9_ -]{1,40}>|\{[A-Za-z0-9_ -]{1,40}\}|\[[A-Za-z0-9_ -]{1,40}\])$/;
const UPPER_METAVAR = /^[A-Z][A-Z_-]*$/;
const GENERIC_METAVARS: ReadonlySet<string> = new Set([
  "VALUE",
  "VAL",
  "STRING",
  "STR",
  "TEXT",
  "ARG",
  "KEY",
  "FILE",
  "PATH",
  "NAME",
  "PASS",
  "PW",
]);

function isMetavar(raw: string): boolean {
  if (BRACKETED_METAVAR.test(raw)) return true;
  return UPPER_METAVAR.test(raw) && (GENERIC_METAVARS.has(raw) || isSecretKeyName(raw));
}
const AWS_SECRET_VALUE = /^[A-Za-z0-9/+]{40}$/;
const AZURE_KEY_NAME = /^(?:AccountKey|SharedAccessKey)$/;
const PWD_KEY = /pwd$/i;
/** A whole value that only names a variable: `$DB_PASSWORD`, `%API_KEY%`. */
const VARIABLE_REFERENCE = /^(?:\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%)$/;

/**
 * Words that start an expression or name a type, not a secret: an unquoted
 * value in source code (`const token = await getToken()`,
 * `accessKey: string;`). A quoted value is always hidden.
 */
const CODE_WORDS: ReadonlySet<string> = new Set([
  "await",
  "new",
  "this",
  "self",
  "cls",
  "string",
  "number",
  "boolean",
  "bool",
  "str",
  "int",
  "bytes",
  "any",
  "unknown",
  "object",
  "void",
  "function",
  "lambda",
  "async",
  "typeof",
  "require",
  "optional",
  "readonly",
]);
/** A call: `getToken(`, `os.getenv(`, `Secrets.load (`. */
const CALL = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*[ \t]*\(/;
const TRAILING_PUNCTUATION = /[;,]+$/;

/**
 * True for an unquoted value that reads as source code: a keyword or type,
 * a call, or the same name read from elsewhere (`api_key = api_key`,
 * `token = self.token`).
 */
function looksLikeCode(raw: string, key: string): boolean {
  const lower = raw.toLowerCase().replace(TRAILING_PUNCTUATION, "");
  const firstWord = lower.split(/[ \t]/, 1)[0] ?? "";
  if (CODE_WORDS.has(firstWord)) return true;
  if (CALL.test(raw)) return true;
  const name = key.toLowerCase().replace(/^-+/, "");
  const tail = name.slice(name.lastIndexOf(".") + 1);
  return lower === tail || lower.endsWith("." + tail);
}

/**
 * The C library's error strings (strerror). Tools report a failure on a file
 * as `tool: NAME: MESSAGE` (error(3)), so `cat: credentials: No such file or
 * directory` has a secret-named "key" whose "value" is an error message. A
 * whole unquoted value equal to one of these is that message, not a secret.
 */
const STRERROR =
  /^(?:No such file or directory|Permission denied|Is a directory|Not a directory|File exists|Operation not permitted|Read-only file system|No space left on device|Too many levels of symbolic links|Invalid argument|Directory not empty|Input\/output error|Device or resource busy|No such device or address|File name too long|Text file busy|Bad file descriptor|Resource temporarily unavailable|Broken pipe|Not a tty|Inappropriate ioctl for device)$/;

/**
 * True when the value is not a secret: empty, a null word, a help-text
 * metavar, a working directory, a variable reference, or (unquoted) source
 * code.
 */
export function isNonSecret(text: string, key: string, isFlag: boolean, value: Value): boolean {
  const length = value.end - value.start;
  if (length === 0) return true;
  if (length > 64) return false;
  const raw = text.slice(value.start, value.end);
  if (NON_VALUES.has(raw.toLowerCase())) return true;
  if (isFlag && isMetavar(raw)) return true;
  // `PWD=/home/me` is the working directory, not a password.
  if (PWD_KEY.test(key) && (raw.startsWith("/") || raw.startsWith("~"))) return true;
  if (VARIABLE_REFERENCE.test(raw)) return true;
  if (!value.quoted && STRERROR.test(raw)) return true;
  return !value.quoted && looksLikeCode(raw, key);
}

/** The marker kind for a hidden value: a few keys name the credential exactly. */
export function kindFor(text: string, key: string, value: Value): string {
  if (AZURE_KEY_NAME.test(key)) return "azure_account_key";
  if (
    isAwsSecretKeyName(key) && AWS_SECRET_VALUE.test(text.slice(value.start, value.end))
  ) return "aws_secret_access_key";
  return "secret_assignment";
}
